# The Tune page's live-chart stall figure (never run by ctest): tune_stall_bench prints it.
if(TARGET moetune_app_private AND TARGET moetune_charts)
  add_executable(tune_stall_bench ${CMAKE_CURRENT_LIST_DIR}/tune_stall_bench.cpp)
  target_link_libraries(tune_stall_bench PRIVATE moetune_app_private Qt6::Widgets moetune_flags)
endif()
