// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/evidence.h"

#include <QAbstractTableModel>
#include <QList>

namespace moetune {

// The evidence lines of one finding: line number and cleaned text, with the matching span as roles.
class EvidenceModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { LineColumn, TextColumn, ColumnCount };
    enum Role { LineRole = Qt::UserRole + 1, MatchStartRole, MatchLengthRole };

    explicit EvidenceModel(QObject *parent = nullptr);

    void setEvidence(const QList<Evidence> &evidence);
    const QList<Evidence> &evidence() const { return m_evidence; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<Evidence> m_evidence;
};

} // namespace moetune
