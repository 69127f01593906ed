#include "core/diagnosis/rule.h"

namespace moetune {

std::optional<Rule> Rule::fromJson(const QJsonObject &, QString *) {
    return std::nullopt; // TODO
}

QString Rule::expand(const QString &text, const QRegularExpressionMatch &) {
    return text;
}

} // namespace moetune
