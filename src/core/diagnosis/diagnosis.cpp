#include "core/diagnosis/diagnosis.h"

using namespace Qt::StringLiterals;

namespace moetune {

int Diagnosis::count(Severity severity) const {
    int n = 0;
    for (const Finding &f : findings)
        n += f.severity == severity ? 1 : 0;
    return n;
}

Severity Diagnosis::worst() const {
    Severity w = Severity::Info;
    for (const Finding &f : findings)
        w = std::max(w, f.severity);
    return w;
}

const Finding *Diagnosis::find(const QString &id) const {
    for (const Finding &f : findings) {
        if (f.id == id)
            return &f;
    }
    return nullptr;
}

QString Diagnosis::toMarkdown() const {
    return QString(); // TODO
}

QString Diagnosis::findingMarkdown(const Finding &) const {
    return QString(); // TODO
}

QJsonObject Diagnosis::toJson() const {
    return QJsonObject(); // TODO
}

} // namespace moetune
