#include "core/diagnosis/ruleset.h"

#include <QStandardPaths>

using namespace Qt::StringLiterals;

namespace moetune {

RuleSet RuleSet::builtin() {
    return RuleSet(); // TODO
}

RuleSet RuleSet::withUserRules(const QString &, QStringList *) {
    return builtin(); // TODO
}

QString RuleSet::userRulesDir() {
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + u"/rules"_s;
}

QList<Rule> RuleSet::parseRuleFile(const QByteArray &, const QString &, QStringList *) {
    return {}; // TODO
}

void RuleSet::add(const Rule &rule) {
    for (Rule &r : m_rules) {
        if (r.id == rule.id) {
            r = rule;
            return;
        }
    }
    m_rules.append(rule);
}

} // namespace moetune
