// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"

#include <QAbstractTableModel>

namespace moetune {

// The config folders a probed host's server reads: SGLang's triton_X_Y_Z folders (newest first) with
// the installed Triton's folder marked present or MISSING; vLLM's flat configs folder.
class HostFolderModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { FolderColumn, FilesColumn, StatusColumn, ColumnCount };
    enum Role { InstalledRole = Qt::UserRole + 1, PresentRole };
    struct Row {
        QString name;
        QStringList files;
        bool installed = false; // the folder of the installed Triton (the one the server looks in first)
        bool present = true;
    };

    explicit HostFolderModel(QObject *parent = nullptr);

    void setProbe(const HostProbe &probe);
    void clear();
    const QList<Row> &rows() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<Row> m_rows;
};

} // namespace moetune
