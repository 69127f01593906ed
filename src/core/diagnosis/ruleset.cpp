// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/ruleset.h"

#include "core/util/coreresources.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QStandardPaths>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune {

RuleSet RuleSet::builtin() {
    ensureCoreResources();
    // Parsed once: QRegularExpression copies share their compiled pattern.
    static const RuleSet rules = [] {
        RuleSet set;
        QFile f(u":/moetune/rules/default-rules.json"_s);
        QStringList errors;
        if (f.open(QIODevice::ReadOnly)) {
            const QByteArray json = f.readAll();
            for (const Rule &r : parseRuleFile(json, u"default-rules.json"_s, &errors))
                set.add(r);
            for (const MoeBackend &b : parseBackends(json, u"default-rules.json"_s, &errors))
                set.add(b);
        } else {
            errors << u"The built-in rules resource is missing."_s;
        }
        if (!errors.isEmpty())
            qWarning("moetune: broken built-in rules: %s", qUtf8Printable(errors.join(u"; "_s)));
        return set;
    }();
    return rules;
}

RuleSet RuleSet::withUserRules(const QString &dir, QStringList *errors) {
    RuleSet set = builtin();
    set.addRulesFromDir(dir, errors);
    return set;
}

namespace {

// A rule file's bytes: opened non-blocking (a FIFO never blocks), a regular file, at most the limit.
bool readRuleFile(const QString &path, QByteArray *out, QString *why) {
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = u"cannot be read ("_s + QString::fromLocal8Bit(std::strerror(errno)) + u")."_s;
        return false;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        *why = u"is not a regular file (a FIFO or device is never read)."_s;
        return false;
    }
    if (st.st_size > RuleSet::kMaxRuleFileBytes) {
        ::close(fd);
        *why = u"is %1 MiB, more than the %2 MiB a rule file may be; none of its rules were loaded."_s
                   .arg(QString::number(double(st.st_size) / (1 << 20), 'f', 1))
                   .arg(RuleSet::kMaxRuleFileBytes >> 20);
        return false;
    }
    QFile f;
    if (!f.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        *why = u"cannot be read ("_s + f.errorString() + u")."_s;
        return false;
    }
    *out = f.read(RuleSet::kMaxRuleFileBytes + 1);
    if (out->size() > RuleSet::kMaxRuleFileBytes) { // it grew while we read
        *why = u"is more than the %1 MiB a rule file may be; none of its rules were loaded."_s.arg(
            RuleSet::kMaxRuleFileBytes >> 20);
        return false;
    }
    return true;
}

} // namespace

void RuleSet::addRulesFromDir(const QString &dir, QStringList *errors) {
    QDir d(dir);
    if (dir.isEmpty() || !d.exists())
        return;
    QStringList files = d.entryList({u"*.json"_s}, QDir::Files | QDir::System, QDir::Name);
    if (files.size() > kMaxRuleFiles) {
        if (errors)
            *errors << u"%1 holds %2 rule files; only the first %3 (by name) were read."_s.arg(dir)
                           .arg(files.size())
                           .arg(kMaxRuleFiles);
        files.resize(kMaxRuleFiles);
    }
    for (const QString &name : std::as_const(files)) {
        const QString path = d.filePath(name);
        QByteArray json;
        QString why;
        if (!readRuleFile(path, &json, &why)) {
            if (errors)
                *errors << path + u": "_s + why;
            continue;
        }
        const QList<Rule> rules = parseRuleFile(json, path, errors);
        for (qsizetype i = 0; i < rules.size(); ++i) {
            if (m_rules.size() >= kMaxRules) {
                if (errors)
                    *errors << path +
                                   u": %1 of its rules were not loaded: a rule set holds at most %2 rules."_s
                                       .arg(rules.size() - i)
                                       .arg(kMaxRules);
                break;
            }
            add(rules[i]);
        }
        for (const MoeBackend &b : parseBackends(json, path, errors)) // silent on bad JSON: reported above
            add(b);
    }
}

QString RuleSet::userRulesDir() {
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + u"/rules"_s;
}

QList<Rule> RuleSet::parseRuleFile(const QByteArray &json, const QString &origin, QStringList *errors) {
    QList<Rule> out;
    auto report = [&](const QString &message) {
        if (errors)
            *errors << origin + u": "_s + message;
    };
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError) {
        const qsizetype line =
            QByteArrayView(json).first(std::clamp<qsizetype>(pe.offset, 0, json.size())).count('\n') + 1;
        report(u"not valid JSON ("_s + pe.errorString() + u" on line "_s + QString::number(line) +
               u"); none of its rules were loaded."_s);
        return out;
    }
    QJsonArray rules;
    if (doc.isObject() && doc.object().contains(u"moe_backends"_s) && !doc.object().contains(u"rules"_s))
        return out; // a file of backend names only
    if (doc.isArray()) {
        rules = doc.array();
    } else if (doc.isObject() && doc.object().value(u"rules"_s).isArray()) {
        rules = doc.object().value(u"rules"_s).toArray();
    } else {
        report(u"expected {\"version\": 1, \"rules\": [...]} or a list of rules; nothing was loaded."_s);
        return out;
    }
    for (qsizetype i = 0; i < rules.size(); ++i) {
        if (!rules.at(i).isObject()) {
            report(u"rule #"_s + QString::number(i + 1) + u" is not an object; skipped."_s);
            continue;
        }
        QString error;
        std::optional<Rule> r = Rule::fromJson(rules.at(i).toObject(), &error);
        if (!r) {
            report(error + u" (rule #"_s + QString::number(i + 1) + u", skipped)"_s);
            continue;
        }
        r->origin = origin;
        out.append(*r);
    }
    return out;
}

QList<MoeBackend> RuleSet::parseBackends(const QByteArray &json, const QString &origin, QStringList *errors) {
    QList<MoeBackend> out;
    const QJsonDocument doc = QJsonDocument::fromJson(json);
    if (!doc.isObject() || !doc.object().contains(u"moe_backends"_s))
        return out;
    const QJsonValue list = doc.object().value(u"moe_backends"_s);
    if (!list.isArray()) {
        if (errors)
            *errors << origin +
                           u": \"moe_backends\" must be a list of {\"name\", \"triton_configs\"} objects."_s;
        return out;
    }
    const QJsonArray entries = list.toArray();
    for (qsizetype i = 0; i < entries.size(); ++i) {
        QString error = u"not an object"_s;
        std::optional<MoeBackend> b =
            entries.at(i).isObject() ? MoeBackend::fromJson(entries.at(i).toObject(), &error) : std::nullopt;
        if (!b) {
            if (errors)
                *errors << origin + u": "_s + error + u" (moe_backends #"_s + QString::number(i + 1) +
                               u", skipped)"_s;
            continue;
        }
        b->origin = origin;
        out.append(*b);
    }
    return out;
}

void RuleSet::add(const MoeBackend &backend) {
    for (MoeBackend &b : m_backends) {
        if (b.name == backend.name && b.scheme == backend.scheme) {
            b = backend;
            return;
        }
    }
    m_backends.append(backend);
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
