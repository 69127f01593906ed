// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"

#include <QHash>
#include <QWidget>

class QComboBox;
class QFormLayout;
class QLabel;
class QTableView;

namespace moetune {

class HostFolderModel;
class HostGpuModel;

// What `probe` learned about a host, laid out for a person: the machine and its versions, GPUs with
// their memory and holders, the server's config folders, the served model and the tuning job it implies.
class HostOverview : public QWidget {
    Q_OBJECT
public:
    explicit HostOverview(QWidget *parent = nullptr);

    void setProbe(const HostProbe &probe);
    // No probe yet: a line saying what to do instead of empty fields.
    void clear(const QString &hint);
    bool hasProbe() const { return m_hasProbe; }

    // The text of one field: "host", "python", "torch", "triton", "nvcc", "framework", "configRoot",
    // "model", "moeShape", "suggestedSpec", "gpuNote".
    QString field(const QString &key) const;
    QStringList fieldKeys() const { return m_fields.keys(); }
    HostGpuModel *gpuModel() const { return m_gpuModel; }
    HostFolderModel *folderModel() const { return m_folderModel; }
    QTableView *gpuView() const { return m_gpuView; }
    QTableView *folderView() const { return m_folderView; }
    // Every server process the probe saw: the agent user's ones are choices ("port N" / "pid N" as data),
    // other users' ones are listed disabled (never used, issue 42.1).
    QComboBox *serverChoice() const { return m_serverChoice; }

signals:
    // The user chose the server every flow of this host acts on: "port N" or "pid N" (ServerChoice text).
    void serverChosen(const QString &choice);

private:
    QLabel *addField(QFormLayout *form, const QString &key, const QString &label);
    void fillServerChoice(const HostProbe &p);
    void setField(const QString &key, const QString &text);

    bool m_hasProbe = false;
    QLabel *m_hint;
    QWidget *m_content;
    QHash<QString, QLabel *> m_fields;
    HostGpuModel *m_gpuModel;
    HostFolderModel *m_folderModel;
    QTableView *m_gpuView = nullptr;
    QTableView *m_folderView = nullptr;
    QComboBox *m_serverChoice = nullptr;
};

} // namespace moetune
