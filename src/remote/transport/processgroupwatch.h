// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

namespace moetune {

// Ends a command's whole process group when this program dies, however it dies (kill -9, the OOM killer,
// a signal that re-raises after cleanup). Used by LocalTransport: each command runs in its own process
// group with a watcher process beside it; the watcher holds the read end of a pipe whose write end only
// this program holds, so it reads EOF exactly when this program is gone, then sends SIGTERM to the group
// and, 2 s later, SIGKILL. The watcher dies with the command (parent-death signal), so a command that ends
// normally leaves nothing behind. PR_SET_PDEATHSIG alone would end only the group leader (/bin/sh), not
// what it started.
class ProcessGroupWatch {
public:
    // The read end of the lifeline pipe (created once; the write end is never closed, close-on-exec).
    // Call in this program before the fork; -1 when no pipe could be made (then commands run unwatched).
    static int lifeline();
    // In the child after fork, before exec: makes the child a process-group leader and starts its
    // watcher. Only async-signal-safe calls.
    static void armInChild(int lifelineFd);

    static constexpr int graceSeconds = 2; // between SIGTERM and SIGKILL
};

} // namespace moetune
