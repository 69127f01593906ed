// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/transport/sshchannel.h"

#include <utility>

namespace moetune {

SshChannel::SshChannel(SshChannel &&other) noexcept
    : m_channel(std::exchange(other.m_channel, nullptr)) {}

SshChannel &SshChannel::operator=(SshChannel &&other) noexcept {
    if (this != &other) {
        reset();
        m_channel = std::exchange(other.m_channel, nullptr);
    }
    return *this;
}

SshChannel SshChannel::exec(ssh_session session, const QByteArray &command) {
    SshChannel ch(ssh_channel_new(session));
    if (!ch || ssh_channel_open_session(ch.get()) != SSH_OK ||
        ssh_channel_request_exec(ch.get(), command.constData()) != SSH_OK)
        return {};
    return ch;
}

void SshChannel::reset() {
    if (m_channel)
        ssh_channel_free(std::exchange(m_channel, nullptr));
}

void SshChannel::close(bool sessionAlive) {
    if (m_channel && sessionAlive)
        ssh_channel_close(m_channel);
    reset();
}

int SshChannel::drain(QByteArray *out, QByteArray *err, int timeoutMs, bool *readFailed) {
    if (readFailed)
        *readFailed = false;
    char buf[16384];
    for (;;) {
        const int n = ssh_channel_read_timeout(m_channel, buf, sizeof buf, 0, timeoutMs);
        if (n == SSH_ERROR) {
            if (readFailed)
                *readFailed = true;
            return -1;
        }
        if (n <= 0)
            break;
        out->append(buf, n);
    }
    for (;;) {
        const int n = ssh_channel_read_nonblocking(m_channel, buf, sizeof buf, 1);
        if (n <= 0)
            break;
        err->append(buf, n);
    }
    return ssh_channel_get_exit_status(m_channel); // after EOF only (libssh rule): the reads above saw it
}

} // namespace moetune
