// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/results/chosenconfigmodel.h"

#include "core/report/reporttext.h"
#include "core/run/kernelconfigjson.h"

#include <QBrush>
#include <QColor>
#include <QFont>

using namespace Qt::StringLiterals;

namespace moetune {

ChosenConfigModel::ChosenConfigModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void ChosenConfigModel::setResult(const SweepResult &result) {
    beginResetModel();
    m_rows.clear();
    m_simulated = result.simulated;
    for (const auto &b : result.perBatch) {
        QStringList keys;
        for (auto op : result.ops)
            if (const SweepEntry *w = result.winner(op, b.m))
                keys.append((result.ops.size() > 1 ? sweepOpName(op) + u' ' : QString()) +
                            KernelConfigJson::key(w->config));
        QString config = keys.join(u" / "_s);
        if (b.chosenDefault)
            config += tr(" (default kept: %1)").arg(QString(b.decision).replace(u'_', u' '));
        m_rows.append(Row{b, config});
    }
    endResetModel();
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
}

int ChosenConfigModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ChosenConfigModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ChosenConfigModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows.at(index.row());
    const BatchSummary &b = row.batch;
    const double values[] = {double(b.m), kUnknown,     b.bestUs,          b.defaultUs,
                             b.speedup,   b.rooflineUs, b.rooflineFraction};
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case ColM:
            return b.m;
        case ColConfig:
            return row.config.isEmpty() ? u"-"_s : row.config;
        case ColTuned:
            return ReportText::us(b.bestUs);
        case ColDefault:
            return ReportText::us(b.defaultUs);
        case ColSpeedup:
            return ReportText::speedup(b.speedup);
        case ColFloor:
            return ReportText::us(b.rooflineUs);
        case ColFraction:
            return ReportText::percent(b.rooflineFraction);
        }
        return {};
    case SortRole:
        return index.column() == ColConfig ? QVariant(row.config) : QVariant(values[index.column()]);
    case Qt::TextAlignmentRole:
        return index.column() == ColConfig ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                           : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
        if (index.column() == ColSpeedup && known(b.speedup) && b.speedup < 1.0)
            return QBrush(QColor(0xc0, 0x39, 0x2b)); // tuned came out slower than the default here
        if (m_simulated && index.column() >= ColTuned)
            return QBrush(QColor(0xc0, 0x39, 0x2b));
        return {};
    case Qt::FontRole:
        if (index.column() == ColSpeedup && known(b.speedup) && b.speedup >= 1.10) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case Qt::ToolTipRole:
        if (m_simulated)
            return tr("SIMULATED (synthetic backend): not a measurement of a GPU.");
        if (index.column() == ColFraction)
            return tr("HBM weight-streaming floor / tuned latency: 100% = at the floor");
        if (index.column() == ColConfig)
            return configKey();
        if (index.column() == ColSpeedup && known(b.speedup) && b.speedup < 1.0)
            return tr("The tuned config measured slower than the default at this size.");
        return {};
    }
    return {};
}

QString ChosenConfigModel::configKey() {
    return tr("The kernel config in short: m16n64k128g1w4s3 = BLOCK_SIZE_M 16, BLOCK_SIZE_N 64, "
              "BLOCK_SIZE_K 128, GROUP_SIZE_M 1, num_warps 4, num_stages 3.");
}

QVariant ChosenConfigModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::ToolTipRole && m_simulated)
        return tr("SIMULATED (synthetic backend)");
    if (role == Qt::ToolTipRole && section == ColConfig)
        return configKey();
    if (role != Qt::DisplayRole)
        return {};
    const QString sim = m_simulated ? tr(" (simulated)") : QString();
    switch (section) {
    case ColM:
        return tr("M");
    case ColConfig:
        return tr("chosen config");
    case ColTuned:
        return QString(tr("tuned µs") + sim);
    case ColDefault:
        return QString(tr("default µs") + sim);
    case ColSpeedup:
        return QString(tr("speedup") + sim);
    case ColFloor:
        return tr("HBM floor µs");
    case ColFraction:
        return tr("of floor");
    }
    return {};
}

} // namespace moetune
