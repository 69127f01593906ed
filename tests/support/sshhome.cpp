// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "sshhome.h"

#include "fakehosttree.h"
#include "sshdfixture.h"

#include <QDir>
#include <QFile>

using namespace Qt::StringLiterals;

namespace moetune::test {

SshHome::SshHome(QString root)
    : m_root(std::move(root)) {
    QDir().mkpath(sshDir());
    QFile::setPermissions(sshDir(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
}

bool SshHome::writeConfig(const QByteArray &text) const {
    return FakeHostTree::writeFile(configPath(), text);
}

bool SshHome::writeInclude(const QString &name, const QByteArray &text) const {
    return FakeHostTree::writeFile(sshDir() + u"/config.d/"_s + name, text);
}

bool SshHome::writeKnownHosts(const QByteArray &text) const {
    QFile::remove(knownHostsPath() + u".old"_s);
    return FakeHostTree::writeFile(knownHostsPath(), text);
}

QByteArray SshHome::knownHosts() const {
    QFile f(knownHostsPath());
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool SshHome::installKey(const QString &privateKey, const QString &name) const {
    const QString target = sshDir() + u'/' + name;
    QFile::remove(target);
    QFile::remove(target + u".pub"_s);
    return QFile::copy(privateKey, target) && QFile::copy(privateKey + u".pub"_s, target + u".pub"_s) &&
           QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner);
}

bool SshHome::hashKnownHosts(QString *error) const {
    return SshdFixture::run(u"ssh-keygen"_s, {u"-q"_s, u"-H"_s, u"-f"_s, knownHostsPath()}, error);
}

QByteArray SshHome::publicKey(const QString &pubFile) {
    QFile f(pubFile);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QList<QByteArray> parts = f.readAll().trimmed().split(' ');
    return parts.size() >= 2 ? parts[0] + ' ' + parts[1] : QByteArray();
}

} // namespace moetune::test
