// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/diagnose/findingsmodel.h"

#include "app/widgets/severitystyle.h"

#include <QFont>
#include <QHash>
#include <QRegularExpression>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

FindingsModel::FindingsModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void FindingsModel::setDiagnosis(const Diagnosis &diagnosis) {
    beginResetModel();
    m_diagnosis = diagnosis;
    m_titles.clear();
    QHash<QString, int> counts;
    for (const Finding &f : std::as_const(m_diagnosis.findings))
        ++counts[f.title];
    for (const Finding &f : std::as_const(m_diagnosis.findings)) {
        QString title = f.title;
        if (counts.value(f.title) > 1 && f.target) {
            // The same words for different places: say the place.
            const QString where =
                !f.target->configRoot.isEmpty() ? f.target->installFolder() : f.target->name.deviceName;
            if (!where.isEmpty())
                title += tr(" (in %1)").arg(where);
        }
        m_titles.append(title);
    }
    const QStringList jobs = findingJobKeys(m_diagnosis.findings);
    m_jobPlaces.fill(NoJob, jobs.size());
    m_jobShapes.fill(QString(), jobs.size());
    for (qsizetype row = 0; row < jobs.size();) {
        qsizetype end = row + 1;
        while (!jobs[row].isEmpty() && end < jobs.size() && jobs[end] == jobs[row])
            ++end;
        if (end - row > 1) {
            const Finding &head = m_diagnosis.findings.at(row);
            const QString device =
                head.target->name.deviceName.isEmpty() ? tr("an unnamed GPU") : head.target->name.deviceName;
            for (qsizetype k = row; k < end; ++k) {
                m_jobPlaces[k] = k == row ? JobHead : (k == end - 1 ? JobLastMember : JobMember);
                m_jobShapes[k] = head.target->shapeSummary() + tr(" on ") + device;
            }
        }
        row = end;
    }
    endResetModel();
}

void FindingsModel::clear() {
    setDiagnosis(Diagnosis{});
}

const Finding *FindingsModel::finding(int row) const {
    if (row < 0 || row >= m_diagnosis.findings.size())
        return nullptr;
    return &m_diagnosis.findings.at(row);
}

int FindingsModel::rowOf(const QString &findingId) const {
    for (int row = 0; row < m_diagnosis.findings.size(); ++row) {
        if (m_diagnosis.findings.at(row).id == findingId)
            return row;
    }
    return -1;
}

int FindingsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_diagnosis.findings.size());
}

int FindingsModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FindingsModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Finding &f = m_diagnosis.findings.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TitleColumn:
            return m_titles.value(index.row(), f.title);
        case OccurrencesColumn:
            return f.occurrences;
        case SourcesColumn:
            return compactSources(f.sources, 3);
        }
        break;
    case Qt::DecorationRole:
        if (index.column() == TitleColumn)
            return SeverityStyle::icon(f.severity);
        break;
    case Qt::ToolTipRole:
        switch (index.column()) {
        case TitleColumn: {
            QString tip = SeverityStyle::label(f.severity) + u": "_s + m_titles.value(index.row(), f.title);
            const int place = m_jobPlaces.value(index.row(), NoJob);
            if (place == JobHead)
                tip += u"\n"_s + tr("Heads the tuning job for %1: its other findings are listed below it, "
                                    "indented.")
                                     .arg(m_jobShapes.value(index.row()));
            else if (place != NoJob)
                tip += u"\n"_s + tr("Part of the tuning job for %1, headed by the finding above.")
                                     .arg(m_jobShapes.value(index.row()));
            return tip;
        }
        case OccurrencesColumn:
            return tr("Seen %n time(s) in the log", nullptr, f.occurrences);
        case SourcesColumn:
            return f.sources.join(u"\n"_s);
        }
        break;
    case Qt::TextAlignmentRole:
        if (index.column() == OccurrencesColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case Qt::FontRole:
        if (index.column() == TitleColumn && f.severity != Severity::Info) {
            QFont font;
            font.setBold(true);
            return font;
        }
        break;
    case SeverityRole:
        return int(f.severity);
    case FindingIdRole:
        return f.id;
    case RuleRole:
        return f.rule;
    case FirstLineRole:
        return f.evidence.isEmpty() ? qint64(0) : f.evidence.first().line;
    case JobRole:
        return m_jobPlaces.value(index.row(), NoJob);
    }
    return {};
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TitleColumn:
        return tr("Finding");
    case OccurrencesColumn:
        return tr("Seen");
    case SourcesColumn:
        return tr("Where");
    }
    return {};
}

} // namespace moetune
