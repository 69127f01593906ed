# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# `moetune-cli report` (results-report engineer's tests).
if(TARGET moetune_report)
  moetune_add_qtest(tst_cli_report SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_cli_report.cpp LABELS cli)
  target_compile_definitions(tst_cli_report PRIVATE MOETUNE_CLI_PATH="$<TARGET_FILE:moetune-cli>"
                                                    MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}")
  add_dependencies(tst_cli_report moetune-cli)
  if(TARGET moetune_agent_pyz)
    add_dependencies(tst_cli_report moetune_agent_pyz)
  endif()
endif()
