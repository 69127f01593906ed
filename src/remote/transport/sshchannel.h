// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>

#include <libssh/libssh.h>

namespace moetune {

// An exec channel that frees itself. libssh frees every channel of a session in ssh_free(), so the
// session's owner resets its channels before it frees the session (SshSession::teardown).
class SshChannel {
public:
    SshChannel() = default;
    explicit SshChannel(ssh_channel channel)
        : m_channel(channel) {}
    ~SshChannel() { reset(); }
    SshChannel(SshChannel &&other) noexcept;
    SshChannel &operator=(SshChannel &&other) noexcept;
    SshChannel(const SshChannel &) = delete;
    SshChannel &operator=(const SshChannel &) = delete;

    // A new session channel running command; an empty handle when the channel or the exec fails.
    static SshChannel exec(ssh_session session, const QByteArray &command);

    ssh_channel get() const { return m_channel; }
    explicit operator bool() const { return m_channel != nullptr; }
    void reset();                  // frees it (no close message: the session may be gone)
    void close(bool sessionAlive); // sends the close when the session is alive, then frees

    // Reads to the end: stdout into out, then what stderr holds into err. Returns the exit status, or
    // -1 (readFailed set) when reading failed. Blocking: for short helper commands of the worker.
    int drain(QByteArray *out, QByteArray *err, int timeoutMs, bool *readFailed = nullptr);

private:
    ssh_channel m_channel = nullptr;
};

} // namespace moetune
