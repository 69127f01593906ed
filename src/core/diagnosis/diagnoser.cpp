#include "core/diagnosis/diagnoser.h"

#include "core/diagnosis/diagnosisbuilder.h"
#include "core/diagnosis/logreader.h"

namespace moetune {

Diagnoser::Diagnoser(RuleSet rules)
    : m_rules(std::move(rules)) {}

Diagnosis Diagnoser::diagnoseFile(const QString &path, const Progress &progress, QString *error) const {
    DiagnosisBuilder builder(m_rules);
    LogReader reader(builder.literals());
    reader.readFile(
        path, [&](const LogReader::Hit &hit) { builder.addHit(hit); }, progress, error);
    return builder.finish(reader.bytesRead(), reader.linesRead(), reader.cancelled());
}

Diagnosis Diagnoser::diagnoseText(QByteArrayView text, const Progress &progress) const {
    DiagnosisBuilder builder(m_rules);
    LogReader reader(builder.literals());
    reader.readBuffer(
        text, [&](const LogReader::Hit &hit) { builder.addHit(hit); }, progress);
    return builder.finish(reader.bytesRead(), reader.linesRead(), reader.cancelled());
}

Diagnosis Diagnoser::diagnoseDevice(QIODevice *dev, const Progress &progress, QString *error) const {
    DiagnosisBuilder builder(m_rules);
    LogReader reader(builder.literals());
    reader.readDevice(
        dev, [&](const LogReader::Hit &hit) { builder.addHit(hit); }, progress, error);
    return builder.finish(reader.bytesRead(), reader.linesRead(), reader.cancelled());
}

} // namespace moetune
