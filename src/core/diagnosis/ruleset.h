// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/moebackend.h"
#include "core/diagnosis/rule.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace moetune {

// The data rules the diagnoser applies beyond its built-in MoE rules.
class RuleSet {
public:
    RuleSet() = default;

    static RuleSet builtin(); // from :/moetune/rules/default-rules.json
    // builtin + dir/*.json; a broken file (or rule) -> an error string naming it, the rest still loads.
    // A user rule with the id of a builtin one replaces it.
    static RuleSet withUserRules(const QString &dir, QStringList *errors);
    static QString userRulesDir(); // QStandardPaths::AppConfigLocation + "/rules"
    // Adds the rules of dir/*.json (name order), bounded: at most kMaxRuleFiles files of at most
    // kMaxRuleFileBytes each, each opened non-blocking and read only when a regular file, and at most
    // kMaxRules rules in the set; what is left out is named in *errors.
    void addRulesFromDir(const QString &dir, QStringList *errors);
    static constexpr qsizetype kMaxRuleFiles = 64;
    static constexpr qint64 kMaxRuleFileBytes = 1 << 20;
    static constexpr qsizetype kMaxRules = 1024;

    // Parses one rule file ({"version": 1, "rules": [...]} or a bare array); errors are appended.
    static QList<Rule> parseRuleFile(const QByteArray &json, const QString &origin, QStringList *errors);
    // The file's "moe_backends" list (what a MoE backend name means for the Triton configs); errors appended.
    static QList<MoeBackend> parseBackends(const QByteArray &json, const QString &origin,
                                           QStringList *errors);

    void add(const Rule &rule);          // replaces a rule with the same id
    void add(const MoeBackend &backend); // replaces an entry of the same name and scheme
    const QList<MoeBackend> &moeBackends() const { return m_backends; }
    const QList<Rule> &rules() const { return m_rules; }
    qsizetype size() const { return m_rules.size(); }
    bool isEmpty() const { return m_rules.isEmpty(); }

private:
    QList<Rule> m_rules;
    QList<MoeBackend> m_backends;
};

} // namespace moetune
