// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/transport/processgroupwatch.h"

#include <cerrno>
#include <csignal>
#include <ctime>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace moetune {

int ProcessGroupWatch::lifeline() {
    static const int readEnd = [] {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0)
            return -1;
        return fds[0]; // fds[1] stays open until this program ends: its end is the signal
    }();
    return readEnd;
}

void ProcessGroupWatch::armInChild(int lifelineFd) {
    ::setpgid(0, 0);
    if (lifelineFd < 0)
        return;
    const pid_t leader = ::getpid();
    // _Fork: no atfork handlers, async-signal-safe (we are between fork and exec of a threaded program).
    const pid_t watcher = ::_Fork();
    if (watcher != 0)
        return; // the command goes on to exec (or, when the fork failed, runs unwatched)
    // The watcher: outside the group it watches, and gone as soon as the command's leader ends.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != leader)
        ::_exit(0);
    // Keep only the lifeline: QProcess waits for EOF on the child's pipes, which the watcher must not hold.
    if (::dup2(lifelineFd, 0) < 0)
        ::_exit(0);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
        ::dup2(null, 1);
        ::dup2(null, 2);
    }
    if (::close_range(3, ~0U, 0) != 0) {
        for (int fd = 3; fd < 65536; ++fd)
            ::close(fd);
    }
    char c = 0;
    ssize_t n = 0;
    do {
        n = ::read(0, &c, 1);
    } while (n < 0 && errno == EINTR);
    // EOF: the program that started the command is gone. Stay alive through the leader's end now.
    ::prctl(PR_SET_PDEATHSIG, 0);
    if (::kill(-leader, SIGTERM) == 0) {
        for (int i = 0; i < graceSeconds * 10 && ::kill(-leader, 0) == 0; ++i) {
            timespec t{0, 100L * 1000 * 1000};
            while (::nanosleep(&t, &t) != 0 && errno == EINTR) {
            }
        }
        ::kill(-leader, SIGKILL);
    }
    ::_exit(0);
}

} // namespace moetune
