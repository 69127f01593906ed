# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# The Tune page (tune-workflow engineer's tests): a real synthetic run on the Local machine, and the
# whole Tune this -> push -> restart -> proof -> undo workflow against the practice server (remote/hosts/practiceserver.h, a test double).
if(TARGET moetune_app_private AND TARGET moetune_charts)
  moetune_add_qtest(tst_tunepage SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_tunepage.cpp
                    LIBS moetune_app_private Qt6::Widgets LABELS gui)
  target_compile_definitions(tst_tunepage PRIVATE MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}")
  if(TARGET moetune_agent_pyz)
    add_dependencies(tst_tunepage moetune_agent_pyz)
  endif()
  set_tests_properties(tst_tunepage PROPERTIES TIMEOUT 600)
endif()

# The push tab's serving benchmark (box, chart, Results tab, PDF page) against the fake server's API and
# the fake bench tool (labelled test doubles).
if(TARGET moetune_app_private AND TARGET moetune_charts AND TARGET moetune_agent_pyz)
  moetune_add_qtest(tst_servingbox SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_servingbox.cpp
                    LIBS moetune_app_private Qt6::Widgets LABELS gui)
  target_compile_definitions(tst_servingbox PRIVATE MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}"
                             MOETUNE_FAKESERVER_PY="${CMAKE_SOURCE_DIR}/resources/practice/fake_sglang_server.py"
                             MOETUNE_FAKEBENCH_PY="${CMAKE_SOURCE_DIR}/tests/support/fakebenchserving.py")
  add_dependencies(tst_servingbox moetune_agent_pyz)
  set_tests_properties(tst_servingbox PROPERTIES TIMEOUT 600 RESOURCE_LOCK local_fake_servers)
endif()
