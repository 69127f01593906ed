// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hostgpumodel.h"

#include <QLocale>

using namespace Qt::StringLiterals;

namespace moetune {

HostGpuModel::HostGpuModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void HostGpuModel::setGpus(const QList<GpuInfo> &gpus) {
    beginResetModel();
    m_gpus = gpus;
    endResetModel();
}

QString HostGpuModel::memoryText(const GpuInfo &gpu) {
    if (gpu.memoryTotalMiB <= 0)
        return tr("unknown");
    const QLocale locale;
    const double gib = 1024.0;
    return tr("%1 / %2 GiB in use (%3%)")
        .arg(locale.toString(gpu.memoryUsedMiB / gib, 'f', 1),
             locale.toString(gpu.memoryTotalMiB / gib, 'f', 1))
        .arg(qRound(100.0 * double(gpu.memoryUsedMiB) / double(gpu.memoryTotalMiB)));
}

QString HostGpuModel::processesText(const GpuInfo &gpu) {
    if (gpu.processes.isEmpty())
        return tr("none");
    QStringList parts;
    for (const GpuProcess &p : gpu.processes)
        parts.append(tr("%1 (pid %2, %3 MiB)").arg(p.name).arg(p.pid).arg(p.usedMiB));
    return parts.join(u", "_s);
}

int HostGpuModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_gpus.size());
}

int HostGpuModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HostGpuModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const GpuInfo &g = m_gpus.at(index.row());
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
        case GpuColumn: {
            QString text = u"%1: %2"_s.arg(g.index).arg(g.name);
            if (!g.computeCapability.isEmpty())
                text += tr(" (sm %1)").arg(g.computeCapability);
            if (role == Qt::ToolTipRole && g.deviceName != g.name)
                text += tr("\nConfig file device name: %1").arg(g.deviceName);
            return text;
        }
        case MemoryColumn:
            return memoryText(g);
        case ProcessesColumn:
            return processesText(g);
        }
    }
    if (role == MemoryFractionRole && index.column() == MemoryColumn)
        return g.memoryTotalMiB > 0 ? double(g.memoryUsedMiB) / double(g.memoryTotalMiB) : -1.0;
    return {};
}

QVariant HostGpuModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal)
        return {};
    // Short headers (the Hosts page fits 1024x640); the tooltip says the whole.
    if (role == Qt::ToolTipRole && section == ProcessesColumn)
        return tr("Processes holding memory on the GPU");
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case GpuColumn:
        return tr("GPU");
    case MemoryColumn:
        return tr("Memory");
    case ProcessesColumn:
        return tr("Held by");
    }
    return {};
}

} // namespace moetune
