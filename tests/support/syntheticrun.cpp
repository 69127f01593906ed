#include "syntheticrun.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

using namespace Qt::StringLiterals;

namespace moetune::test {

QString runSyntheticTune(const QString &agentPyz, const QString &agentHome, const QJsonArray &batchSizes,
                         QString *error) {
    if (!QDir().mkpath(agentHome)) {
        *error = u"cannot create %1"_s.arg(agentHome);
        return {};
    }
    const QString spec = QDir(agentHome).filePath(u"spec.json"_s);
    QFile f(spec);
    if (!f.open(QIODevice::WriteOnly)) {
        *error = u"cannot write %1: %2"_s.arg(spec, f.errorString());
        return {};
    }
    f.write(QJsonDocument(QJsonObject{{"framework"_L1, u"sglang"_s},
                                      {"E"_L1, 8},
                                      {"N"_L1, 128},
                                      {"K"_L1, 256},
                                      {"topk"_L1, 2},
                                      {"batch_sizes"_L1, batchSizes},
                                      {"backend"_L1, u"synthetic"_s}})
                .toJson());
    f.close();
    QProcess p;
    p.start(u"python3"_s, {agentPyz, u"--home"_s, agentHome, u"tune"_s, spec, u"--foreground"_s});
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        *error =
            u"agent tune exited %1: %2"_s.arg(p.exitCode()).arg(QString::fromUtf8(p.readAllStandardError()));
        return {};
    }
    const QDir runsDir(QDir(agentHome).filePath(u"runs"_s));
    const QStringList runs = runsDir.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    if (runs.size() != 1) {
        *error = u"expected one run folder under %1, found %2"_s.arg(runsDir.path()).arg(runs.size());
        return {};
    }
    return runsDir.filePath(runs.first());
}

} // namespace moetune::test
