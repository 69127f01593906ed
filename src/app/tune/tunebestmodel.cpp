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
    const QMap<int, double> best = progress.bestPerBatch();
    // New batch sizes are inserted in order; known ones change in place.
    for (auto it = best.begin(); it != best.end(); ++it) {
        qsizetype pos = 0;
        while (pos < m_rows.size() && m_rows[pos].m < it.key())
            ++pos;
        if (pos < m_rows.size() && m_rows[pos].m == it.key()) {
            Row &r = m_rows[pos];
            const double def = progress.defaultUs.value(it.key());
            if (r.best != it.value() || r.def != def) {
                r.best = it.value();
                r.def = def;
                emit dataChanged(index(int(pos), Best), index(int(pos), Speedup));
            }
            continue;
        }
        beginInsertRows({}, int(pos), int(pos));
        m_rows.insert(pos, Row{it.key(), it.value(), progress.defaultUs.value(it.key())});
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
        case Best:
            return u"%1 µs%2"_s.arg(r.best, 0, 'f', 2).arg(m_simulated ? u" (simulated)"_s : QString());
        case Default:
            return r.def > 0 ? QVariant(u"%1 µs"_s.arg(r.def, 0, 'f', 2)) : QVariant(u"-"_s);
        case Speedup:
            return r.def > 0 && r.best > 0 ? QVariant(u"%1x"_s.arg(r.def / r.best, 0, 'f', 2))
                                           : QVariant(u"-"_s);
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
               : index.column() == Best    ? QVariant(r.best)
               : index.column() == Default ? QVariant(r.def)
               : index.column() == Floor   ? QVariant(floor)
                                           : QVariant(r.def > 0 && r.best > 0 ? r.def / r.best : 0.0);
    if (role == Qt::TextAlignmentRole)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && index.column() == Speedup && r.def > 0 && r.best > r.def)
        return QBrush(QColor(0xb0, 0x30, 0x30)); // slower than the default: say so
    return {};
}

QVariant TuneBestModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case BatchSize:
        return tr("Batch size");
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
