// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/results/comparemodel.h"

#include "core/report/reporttext.h"
#include "core/run/kernelconfigjson.h"

#include <QBrush>
#include <QColor>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

CompareModel::CompareModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void CompareModel::clear() {
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

QString CompareModel::differences(const KernelConfig &a, const KernelConfig &b) {
    using P = KernelConfigJson::Parameter;
    QStringList parts;
    for (P p : {P::BlockM, P::BlockN, P::BlockK, P::GroupM, P::Warps, P::Stages}) {
        const int x = KernelConfigJson::value(a, p), y = KernelConfigJson::value(b, p);
        if (x != y)
            parts.append(u"%1 %2→%3"_s.arg(KernelConfigJson::shortName(p)).arg(y).arg(x));
    }
    if (a.useTma.value_or(false) != b.useTma.value_or(false))
        parts.append(u"TMA %1→%2"_s.arg(b.useTma.value_or(false) ? u"on"_s : u"off"_s,
                                        a.useTma.value_or(false) ? u"on"_s : u"off"_s));
    return parts.isEmpty() ? u"same"_s : parts.join(u", "_s);
}

void CompareModel::setComparison(const SweepResult &run, SweepOp op, const ConfigFile &other,
                                 const QString &otherLabel, const QList<SweepResult> &measuredIn) {
    beginResetModel();
    m_rows.clear();
    m_otherLabel = otherLabel;
    m_simulated = run.simulated;
    QList<int> sizes;
    for (const auto &w : run.winners)
        if (w.op == op && !sizes.contains(w.m))
            sizes.append(w.m);
    for (auto it = other.entries.cbegin(); it != other.entries.cend(); ++it)
        if (!sizes.contains(it.key()))
            sizes.append(it.key());
    std::sort(sizes.begin(), sizes.end());
    for (int m : std::as_const(sizes)) {
        Row row;
        row.m = m;
        if (const SweepEntry *w = run.winner(op, m)) {
            row.mine = w->config;
            row.mineUs = w->medianUs;
        }
        // The server uses the nearest key of a file, so that is the config to compare at m.
        if (const KernelConfig *o = other.nearest(m)) {
            row.other = *o;
            for (auto it = other.entries.cbegin(); it != other.entries.cend(); ++it)
                if (&it.value() == o)
                    row.otherKey = it.key();
            for (const auto &r : measuredIn) {
                const double us = r.latencyOf(op, m, *o);
                if (known(us)) {
                    row.otherUs = us;
                    row.otherWhere = r.runId;
                    m_simulated = m_simulated || r.simulated;
                    break;
                }
            }
        }
        m_rows.append(row);
    }
    endResetModel();
}

int CompareModel::differingRows() const {
    return int(std::count_if(m_rows.cbegin(), m_rows.cend(),
                             [](const Row &r) { return r.mine && r.other && !(*r.mine == *r.other); }));
}

int CompareModel::measuredOtherRows() const {
    return int(std::count_if(m_rows.cbegin(), m_rows.cend(), [](const Row &r) { return known(r.otherUs); }));
}

int CompareModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CompareModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows.at(index.row());
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case ColM:
            return row.m;
        case ColThis:
            return row.mine ? KernelConfigJson::key(*row.mine) : tr("not tuned");
        case ColOther:
            if (!row.other)
                return tr("(empty file)");
            return row.otherKey == row.m
                       ? KernelConfigJson::key(*row.other)
                       : tr("%1 (key %2)").arg(KernelConfigJson::key(*row.other)).arg(row.otherKey);
        case ColDiff:
            return row.mine && row.other ? differences(*row.mine, *row.other) : u"-"_s;
        case ColThisUs:
            return ReportText::us(row.mineUs);
        case ColOtherUs:
            return known(row.otherUs) ? ReportText::us(row.otherUs) : tr("not measured");
        case ColRatio:
            return known(row.otherUs) && known(row.mineUs) && row.mineUs > 0
                       ? ReportText::speedup(row.otherUs / row.mineUs)
                       : u"-"_s;
        }
        return {};
    }
    if (role == Qt::ToolTipRole) {
        if (m_simulated)
            return tr("SIMULATED (synthetic backend): not a measurement of a GPU.");
        if (index.column() == ColOtherUs && known(row.otherUs))
            return tr("Timed in run %1").arg(row.otherWhere);
        if (index.column() == ColOther && row.other && row.otherKey != row.m)
            return tr("The file has no key %1; the server uses its nearest key, %2.")
                .arg(row.m)
                .arg(row.otherKey);
        return {};
    }
    if (role == Qt::ForegroundRole && index.column() == ColDiff && row.mine && row.other &&
        !(*row.mine == *row.other))
        return QBrush(QColor(0x1f, 0x4e, 0x9a));
    if (role == Qt::TextAlignmentRole)
        return index.column() >= ColThisUs || index.column() == ColM
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    return {};
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == ColOther)
        return m_otherLabel; // the whole label (a path) here; the header itself stays narrow
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount)
        return {};
    const QString sim = m_simulated ? tr(" (simulated)") : QString();
    switch (section) {
    case ColM:
        return tr("M");
    case ColThis:
        return tr("this run");
    case ColOther:
        return tr("other file");
    case ColDiff:
        return tr("differences (other → this run)");
    case ColThisUs:
        return QString(tr("this run µs") + sim);
    case ColOtherUs:
        return QString(tr("other µs") + sim);
    case ColRatio:
        return tr("other / this");
    }
    return {};
}

} // namespace moetune
