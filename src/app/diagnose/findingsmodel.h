// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/sourcelist.h"

#include <QAbstractTableModel>

namespace moetune {

// The findings of one Diagnosis as a table: title (with severity icon), occurrences, sources. A row is a
// finding of the diagnosis (same index); the findings of one tuning job are adjacent (Diagnosis's order),
// and JobRole says which heads a job and which belong to the one above (the pane indents them).
class FindingsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { TitleColumn, OccurrencesColumn, SourcesColumn, ColumnCount };
    enum Role { SeverityRole = Qt::UserRole + 1, FindingIdRole, RuleRole, FirstLineRole, JobRole };
    // JobRole: where a row stands in the tuning job it belongs to (findingJobKeys): the findings of one
    // job (its up file, its _down file, their Triton folder) follow each other, the first one heads them.
    enum JobPlace { NoJob = 0, JobHead, JobMember, JobLastMember };

    explicit FindingsModel(QObject *parent = nullptr);

    void setDiagnosis(const Diagnosis &diagnosis);
    const Diagnosis &diagnosis() const { return m_diagnosis; }
    void clear();

    // nullptr when row is out of range.
    const Finding *finding(int row) const;
    // -1 when no finding has that id.
    int rowOf(const QString &findingId) const;
    // The title as listed: findings whose titles are equal but whose facts differ (another config
    // root or device) name what differs.
    QString shownTitle(int row) const { return m_titles.value(row); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    Diagnosis m_diagnosis;
    QStringList m_titles;
    QList<int> m_jobPlaces;  // JobPlace per row
    QStringList m_jobShapes; // the head's shape per row of a job ("E=128, N=768, bf16 on NVIDIA_H200")
};

} // namespace moetune
