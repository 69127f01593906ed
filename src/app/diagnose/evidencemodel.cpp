// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/diagnose/evidencemodel.h"

#include <QFontDatabase>

using namespace Qt::StringLiterals;

namespace moetune {

EvidenceModel::EvidenceModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void EvidenceModel::setEvidence(const QList<Evidence> &evidence) {
    beginResetModel();
    m_evidence = evidence;
    endResetModel();
}

int EvidenceModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_evidence.size());
}

int EvidenceModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant EvidenceModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Evidence &e = m_evidence.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return index.column() == LineColumn ? QVariant(e.line) : QVariant(e.text);
    case Qt::ToolTipRole:
        return tr("Line %1 (click to show it in the log)\n%2").arg(e.line).arg(e.text);
    case Qt::FontRole:
        return QFontDatabase::systemFont(QFontDatabase::FixedFont);
    case Qt::TextAlignmentRole:
        if (index.column() == LineColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case LineRole:
        return e.line;
    case MatchStartRole:
        return qint64(e.matchStart);
    case MatchLengthRole:
        return qint64(e.matchLength);
    }
    return {};
}

QVariant EvidenceModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == LineColumn ? tr("Line") : tr("Evidence");
}

} // namespace moetune
