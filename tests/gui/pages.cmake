# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 21's pages and report as a new user finds them (live numbers, big logs, layouts, the PDF).
if(TARGET moetune_app_private AND TARGET moetune_report)
  moetune_add_qtest(tst_pagesround3 SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_pagesround3.cpp
                    LIBS moetune_app_private moetune_report Qt6::Charts Qt6::Widgets LABELS gui report)
  target_compile_definitions(tst_pagesround3 PRIVATE MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}")
  if(TARGET moetune_agent_pyz)
    add_dependencies(tst_pagesround3 moetune_agent_pyz)
  endif()
endif()
