#include "core/diagnosis/diagnoser.h"

namespace moetune {

Diagnoser::Diagnoser(RuleSet rules)
    : m_rules(std::move(rules)) {}

Diagnosis Diagnoser::diagnoseFile(const QString &, const Progress &, QString *) const {
    return Diagnosis(); // TODO
}

Diagnosis Diagnoser::diagnoseText(QByteArrayView, const Progress &) const {
    return Diagnosis(); // TODO
}

Diagnosis Diagnoser::diagnoseDevice(QIODevice *, const Progress &, QString *) const {
    return Diagnosis(); // TODO
}

} // namespace moetune
