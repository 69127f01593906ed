// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"

#include <QAbstractTableModel>

namespace moetune {

// The GPUs of a probed host: name, memory in use (the view draws it as a bar) and who holds it.
class HostGpuModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { GpuColumn, MemoryColumn, ProcessesColumn, ColumnCount };
    enum Role { MemoryFractionRole = Qt::UserRole + 1 }; // used / total in [0, 1], or -1 when unknown

    explicit HostGpuModel(QObject *parent = nullptr);

    void setGpus(const QList<GpuInfo> &gpus);
    const QList<GpuInfo> &gpus() const { return m_gpus; }
    static QString memoryText(const GpuInfo &gpu);
    static QString processesText(const GpuInfo &gpu);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<GpuInfo> m_gpus;
};

} // namespace moetune
