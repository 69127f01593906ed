// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunebestmodel.h"

#include <QBrush>
#include <QColor>

using namespace Qt::StringLiterals;

namespace moetune {

TuneBestModel::TuneBestModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void TuneBestModel::clear() {
    beginResetModel();
    m_rows.clear();
    m_floors.clear();
    endResetModel();
}

void TuneBestModel::setFloors(const QMap<int, double> &floorUs) {
    m_floors = floorUs;
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, Floor), index(int(m_rows.size()) - 1, Floor));
}

void TuneBestModel::setProgress(const RunProgress &progress) {
    m_simulated = progress.simulated;
    const bool ended = progress.finished();
    if (ended != m_ended) {
        m_ended = ended;
        if (!m_rows.isEmpty())
            emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
    }
    // New batch sizes are inserted in order; known ones change in place.
    for (const RunProgress::Row &p : progress.rows()) {
        const Row row{p.m, p.op, p.bestUs, p.defaultUs, p.complete};
        qsizetype pos = 0;
        while (pos < m_rows.size() && m_rows[pos].m < p.m)
            ++pos;
        if (pos < m_rows.size() && m_rows[pos].m == p.m) {
            if (!(m_rows[pos] == row)) {
                m_rows[pos] = row;
                emit dataChanged(index(int(pos), Op), index(int(pos), Floor));
            }
            continue;
        }
        beginInsertRows({}, int(pos), int(pos));
        m_rows.insert(pos, row);
        endInsertRows();
    }
}

int TuneBestModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int TuneBestModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TuneBestModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const Row &r = m_rows[index.row()];
    const double floor = m_floors.value(r.m);
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case BatchSize:
            return r.m;
        case Op:
            return r.complete ? r.op : tr("%1 only").arg(r.op);
        case Best:
            return u"%1 µs%2"_s.arg(r.best, 0, 'f', 2).arg(m_simulated ? u" (simulated)"_s : QString());
        case Default:
            return r.def > 0 ? QVariant(u"%1 µs"_s.arg(r.def, 0, 'f', 2)) : QVariant(u"-"_s);
        case Speedup:
            return comparable(r) ? QVariant(u"%1x"_s.arg(r.def / r.best, 0, 'f', 2)) : QVariant(u"-"_s);
        case Floor:
            return floor > 0
                       ? QVariant(u"%1 µs (%2%)"_s.arg(floor, 0, 'f', 2).arg(qRound(100 * floor / r.best)))
                       : QVariant(u"-"_s);
        default:
            break;
        }
    }
    if (role == Qt::UserRole) // raw numbers for sorting and tests
        return index.column() == BatchSize ? QVariant(r.m)
               : index.column() == Op      ? QVariant(r.op)
               : index.column() == Best    ? QVariant(r.best)
               : index.column() == Default ? QVariant(r.def)
               : index.column() == Floor   ? QVariant(floor)
                                           : QVariant(comparable(r) ? r.def / r.best : 0.0);
    if (role == Qt::ToolTipRole && !r.complete) {
        if (m_ended)
            return tr("The run ended before the down GEMM was measured at M=%1: no up+down total, so no "
                      "speedup (the report shows none either). The %2 GEMM alone: %3 µs, its default %4 µs.")
                .arg(r.m)
                .arg(r.op)
                .arg(r.best, 0, 'f', 2)
                .arg(r.def, 0, 'f', 2);
        return tr("Only the %1 GEMM has a best at M=%2 so far: best, default and speedup are of the %1 GEMM "
                  "alone; the up+down total follows once the other GEMM is measured.")
            .arg(r.op)
            .arg(r.m);
    }
    if (role == Qt::TextAlignmentRole)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && index.column() == Speedup && comparable(r) && r.best > r.def)
        return QBrush(QColor(0xb0, 0x30, 0x30)); // slower than the default: say so
    return {};
}

QVariant TuneBestModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case BatchSize:
        return tr("Batch size");
    case Op:
        return tr("Up/down"); // which of the MoE layer's two matmuls: up, down, or both summed
    case Best:
        return tr("Best so far");
    case Default:
        return tr("Default");
    case Speedup:
        return tr("Speedup");
    case Floor:
        return tr("HBM floor");
    default:
        return {};
    }
}

} // namespace moetune
