# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# The Results page's figures (never run by ctest): tests/bench/results_bench.sh prints them.
if(TARGET moetune_app_private AND TARGET moetune_report)
  add_executable(results_bench ${CMAKE_CURRENT_LIST_DIR}/results_bench.cpp)
  target_link_libraries(results_bench PRIVATE moetune_app_private moetune_report Qt6::Test moetune_flags)
endif()
