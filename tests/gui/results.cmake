# Charts, the Results page and the PDF report (results-report engineer's tests).
if(TARGET moetune_charts)
  moetune_add_qtest(tst_charts SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_charts.cpp LIBS moetune_charts Qt6::Charts Qt6::Widgets LABELS gui)
  target_compile_definitions(tst_charts PRIVATE MOETUNE_SOURCE_DIR="${CMAKE_SOURCE_DIR}" MOETUNE_AGENT_PYZ="${MOETUNE_AGENT_PYZ}")
  if(TARGET moetune_agent_pyz)
    add_dependencies(tst_charts moetune_agent_pyz)
  endif()
endif()
