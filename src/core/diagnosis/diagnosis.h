#pragma once

#include "core/diagnosis/finding.h"
#include "core/diagnosis/tuningtarget.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace moetune {

// The result of reading one log.
struct Diagnosis {
    QList<Finding> findings;     // sorted: severity desc, then first line
    QList<TuningTarget> targets; // one per shape: up+down merged
    QString summary;             // one line a person can act on
    qint64 bytesRead = 0;
    qint64 linesRead = 0;
    bool cancelled = false;

    int count(Severity severity) const;
    Severity worst() const; // Info when there are no findings
    const Finding *find(const QString &id) const;

    QString toMarkdown() const;
    QString findingMarkdown(const Finding &finding) const;
    QJsonObject toJson() const; // the documented `moetune-cli diagnose --format json` schema
};

} // namespace moetune
