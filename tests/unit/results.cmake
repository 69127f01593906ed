# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Tuning results, workspaces and the report model (results-report engineer's tests).
moetune_add_qtest(tst_sweepresult SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_sweepresult.cpp LABELS unit core)
target_compile_definitions(tst_sweepresult PRIVATE MOETUNE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                                                   MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}")
if(TARGET moetune_agent_pyz)
  add_dependencies(tst_sweepresult moetune_agent_pyz)
endif()
