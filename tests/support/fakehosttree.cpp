// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "fakehosttree.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

using namespace Qt::StringLiterals;

namespace moetune::test {

FakeHostTree::FakeHostTree(QString root, Framework framework)
    : m_root(std::move(root))
    , m_framework(framework) {}

QString FakeHostTree::configRoot() const {
    return m_framework == Framework::SGLang
               ? sitePath() + u"/sglang/srt/layers/moe/fused_moe_triton/configs"_s
               : sitePath() + u"/vllm/model_executor/layers/fused_moe/configs"_s;
}

bool FakeHostTree::writeFile(const QString &path, const QByteArray &data, bool executable) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(data) != data.size())
        return false;
    f.close();
    return !executable || f.setPermissions(f.permissions() | QFile::ExeOwner | QFile::ExeUser);
}

bool FakeHostTree::create(const QString &frameworkVersion, const QString &tritonVersion, QString *error,
                          const QString &extraEnv) {
    const QString pkg = m_framework == Framework::SGLang ? u"sglang"_s : u"vllm"_s;
    const QString site = sitePath();
    bool ok =
        writeFile(site + u'/' + pkg + u"/__init__.py"_s,
                  "__version__ = \"" + frameworkVersion.toUtf8() + "\"\n") &&
        writeFile(site + u"/triton/__init__.py"_s, "__version__ = \"" + tritonVersion.toUtf8() + "\"\n");
    // the packages on the way to the config folder, so that the probe's imports of them succeed
    const QStringList parts = QDir(site).relativeFilePath(QFileInfo(configRoot()).path()).split(u'/');
    QString dir = site;
    for (const QString &p : parts) {
        dir += u'/' + p;
        if (p != pkg && !QFile::exists(dir + u"/__init__.py"_s))
            ok = ok && writeFile(dir + u"/__init__.py"_s, {});
    }
    ok = ok && QDir().mkpath(configRoot());
    ok = ok &&
         writeFile(
             python(),
             (u"#!/bin/sh\nPYTHONPATH='%1' %2 exec /usr/bin/python3 \"$@\"\n"_s.arg(site, extraEnv)).toUtf8(),
             true);
    if (!ok)
        *error = u"cannot write the fake host tree under "_s + m_root;
    return ok;
}

bool FakeHostTree::addConfig(const QString &tritonFolder, const QString &fileName, const QByteArray &json) {
    const QString folder =
        m_framework == Framework::SGLang ? configRoot() + u'/' + tritonFolder : configRoot();
    return writeFile(folder + u'/' + fileName, json);
}

} // namespace moetune::test
