// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/tempfileguard.h"

#include <QFile>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune::cli {

namespace {

constexpr int kSlots = 8;
constexpr int kPathMax = 4096;
// Written before a slot is marked used, read by the signal handler: plain arrays, no allocation there.
char g_paths[kSlots][kPathMax];
volatile sig_atomic_t g_used[kSlots];

extern "C" void removeAndDie(int sig) {
    for (int i = 0; i < kSlots; ++i) {
        if (g_used[i])
            ::unlink(g_paths[i]);
    }
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

void installHandlers() {
    static bool installed = false;
    if (installed)
        return;
    installed = true;
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
        struct sigaction old {};
        if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL)
            continue; // ignored (nohup) or someone else's handler: leave it
        struct sigaction sa {};
        sa.sa_handler = removeAndDie;
        sigemptyset(&sa.sa_mask);
        ::sigaction(sig, &sa, nullptr);
    }
}

} // namespace

TempFileGuard::TempFileGuard(QString pattern)
    : m_pattern(std::move(pattern)) {}

TempFileGuard::~TempFileGuard() {
    if (m_fd >= 0) {
        ::close(m_fd); // the last reference to a nameless file: the kernel frees it
        return;
    }
    if (m_slot >= 0)
        g_used[m_slot] = 0;
    if (!m_path.isEmpty())
        QFile::remove(m_path);
}

bool TempFileGuard::create(QString *error) {
    QByteArray name = QFile::encodeName(m_pattern);
    const qsizetype x = name.lastIndexOf("XXXXXX");
    if (x < 0 || name.size() >= kPathMax) {
        *error = u"bad temporary file name %1"_s.arg(m_pattern);
        return false;
    }
    const int suffix = int(name.size() - x - 6);
    int slot = -1;
    for (int i = 0; i < kSlots && slot < 0; ++i) {
        if (!g_used[i])
            slot = i;
    }
    if (slot < 0) {
        *error = u"too many temporary files at once"_s;
        return false;
    }
    installHandlers();
    const int fd = ::mkostemps(name.data(), suffix, O_CLOEXEC);
    if (fd < 0) {
        *error = u"cannot create a temporary file %1: %2"_s.arg(m_pattern,
                                                                QString::fromLocal8Bit(std::strerror(errno)));
        return false;
    }
    // A nameless file where the process's descriptors have paths: gone with the process, even kill -9.
    const QByteArray viaFd = "/proc/self/fd/" + QByteArray::number(fd);
    if (::access("/proc/self/fd", X_OK) == 0 && ::unlink(name.constData()) == 0) {
        m_fd = fd;
        m_path = QFile::decodeName(viaFd);
        return true;
    }
    ::close(fd);
    std::memcpy(g_paths[slot], name.constData(), size_t(name.size()) + 1);
    g_used[slot] = 1;
    m_slot = slot;
    m_path = QFile::decodeName(name);
    return true;
}

} // namespace moetune::cli
