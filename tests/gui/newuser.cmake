# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# What a new user without a GPU meets (issue 21): the practice server loop, and the small GUI fixes
# (Start after Check GPUs, GUI sentences, K/top-k from the model list, the host and profile dialogs).
if(TARGET moetune_app_private AND TARGET moetune_charts AND DEFINED MOETUNE_AGENT_PYZ)
  moetune_add_qtest(tst_practiceserver SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_practiceserver.cpp
                    LIBS moetune_app_private Qt6::Widgets LABELS gui)
  target_compile_definitions(tst_practiceserver PRIVATE MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}")
  if(TARGET moetune_agent_pyz)
    add_dependencies(tst_practiceserver moetune_agent_pyz)
  endif()
  # It starts a stand-in server on this machine, which the probe of other such tests would see.
  set_tests_properties(tst_practiceserver PROPERTIES TIMEOUT 600 RESOURCE_LOCK local_fake_servers)
  moetune_add_qtest(tst_newuser SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_newuser.cpp
                    LIBS moetune_app_private Qt6::Widgets LABELS gui)
  target_compile_definitions(tst_newuser PRIVATE MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}")
endif()
