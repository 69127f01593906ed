# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# The headroom check's value type, its protocol events and its place in a workspace run (issue 19).
moetune_add_qtest(tst_headroomresult SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_headroomresult.cpp LABELS unit core)
target_compile_definitions(tst_headroomresult PRIVATE MOETUNE_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
