// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/hosts/credentialstore.h"

#include "remote/hosts/hostconfig.h"

#include <qt6keychain/keychain.h>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {
const QString kService = u"moetune"_s;

template <typename JobT>
JobT *makeJob(QObject *parent, const QString &key) {
    auto *job = new JobT(kService, parent); // deletes itself once finished (autoDelete)
    job->setAutoDelete(true);
    job->setInsecureFallback(false); // never a plain-text file: the keyring or nothing
    job->setKey(key);
    return job;
}
} // namespace

CredentialStore::CredentialStore(QObject *parent)
    : QObject(parent) {}

QString CredentialStore::keyFor(const HostConfig &host, const QString &purpose) {
    const QString name = host.hostName.isEmpty() ? host.alias : host.hostName;
    QString key = u"ssh:%1@%2:%3"_s.arg(host.user, name, QString::number(host.port > 0 ? host.port : 22));
    if (!purpose.isEmpty())
        key += u'#' + purpose;
    return key;
}

void CredentialStore::read(const QString &key) {
    auto *job = makeJob<QKeychain::ReadPasswordJob>(this, key);
    connect(job, &QKeychain::Job::finished, this, [this, job, key] {
        if (job->error() == QKeychain::NoError)
            emit readFinished(key, true, job->textData(), QString());
        else if (job->error() == QKeychain::EntryNotFound)
            emit readFinished(key, false, QString(), QString());
        else
            emit readFinished(key, false, QString(), job->errorString());
    });
    job->start();
}

void CredentialStore::write(const QString &key, const QString &secret) {
    auto *job = makeJob<QKeychain::WritePasswordJob>(this, key);
    job->setTextData(secret);
    connect(job, &QKeychain::Job::finished, this, [this, job, key] {
        emit writeFinished(key, job->error() == QKeychain::NoError ? QString() : job->errorString());
    });
    job->start();
}

void CredentialStore::remove(const QString &key) {
    auto *job = makeJob<QKeychain::DeletePasswordJob>(this, key);
    connect(job, &QKeychain::Job::finished, this, [this, job, key] {
        const bool ok = job->error() == QKeychain::NoError || job->error() == QKeychain::EntryNotFound;
        emit removeFinished(key, ok ? QString() : job->errorString());
    });
    job->start();
}

} // namespace moetune
