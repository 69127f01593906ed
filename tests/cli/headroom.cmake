# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# `moetune-cli headroom` on the Local machine with the synthetic backend (issue 19).
moetune_add_qtest(tst_cli_headroom SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_cli_headroom.cpp LABELS cli)
target_compile_definitions(tst_cli_headroom PRIVATE MOETUNE_CLI_PATH="$<TARGET_FILE:moetune-cli>"
                                                    MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}")
add_dependencies(tst_cli_headroom moetune-cli)
if(TARGET moetune_agent_pyz)
  add_dependencies(tst_cli_headroom moetune_agent_pyz)
endif()
