# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# The headroom check on the Tune page and the Diagnose page's finding (issue 19): a real agent check
# with the synthetic backend (SIMULATED) on the Local machine.
if(TARGET moetune_app_private AND TARGET moetune_charts)
  moetune_add_qtest(tst_tuneheadroom SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_tuneheadroom.cpp
                    LIBS moetune_app_private Qt6::Widgets LABELS gui)
  target_compile_definitions(tst_tuneheadroom PRIVATE MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}")
  if(TARGET moetune_agent_pyz)
    add_dependencies(tst_tuneheadroom moetune_agent_pyz)
  endif()
  set_tests_properties(tst_tuneheadroom PROPERTIES TIMEOUT 300)
endif()
