// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>

namespace moetune::test {

// The files of an inference server's Python install on a GPU host, as the agent's probe reads them: a
// site-packages folder (a space in its name on purpose) with sglang or vllm, triton, the framework's
// fused-MoE config folder, and an interpreter wrapper that puts the folder on PYTHONPATH.
// TEST DOUBLE: importable stubs with version strings stand in for the real packages (no kernels, no GPU).
class FakeHostTree {
public:
    enum class Framework { SGLang, Vllm };

    explicit FakeHostTree(QString root, Framework framework = Framework::SGLang);

    // Writes the package tree and the interpreter wrapper. extraEnv: "NAME=value ..." for the wrapper.
    bool create(const QString &frameworkVersion, const QString &tritonVersion, QString *error,
                const QString &extraEnv = {});
    // A config file of the framework: SGLang under configRoot()/tritonFolder/, vLLM in configRoot().
    bool addConfig(const QString &tritonFolder, const QString &fileName, const QByteArray &json);

    QString root() const { return m_root; }
    QString sitePath() const { return m_root + QStringLiteral("/site packages"); }
    QString configRoot() const;
    QString python() const { return m_root + QStringLiteral("/bin/python"); } // the wrapper

    static bool writeFile(const QString &path, const QByteArray &data, bool executable = false);

private:
    QString m_root;
    Framework m_framework;
};

} // namespace moetune::test
