// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/hosts/hostconfig.h"
#include "remote/transport/transport.h"

#include <QAbstractTableModel>
#include <QList>

namespace moetune {

// The Hosts page's list: the hosts of ~/.ssh/config and the app's own, plus "Local machine", each with
// its connection state. Rows are addressed by alias; the state comes from the page's connections.
class HostListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, AddressColumn, SourceColumn, StateColumn, ColumnCount };
    enum Role { AliasRole = Qt::UserRole + 1, StateRole, IsLocalRole, MessageRole };
    enum class Origin { SshConfig, App, Local };
    struct Entry {
        HostConfig host;
        Origin origin = Origin::App;
        Transport::State state = Transport::State::Disconnected;
        QString message; // the last state message or error, shown as the row's tooltip
        bool busy = false;
    };

    static QString localAlias(); // the alias of the "Local machine" entry

    explicit HostListModel(QObject *parent = nullptr);

    // Replaces the host list; the connection state of aliases that stay is kept.
    void setHosts(const QList<HostConfig> &hosts, const HostConfig &local);
    void setState(const QString &alias, Transport::State state, const QString &message);
    void setBusy(const QString &alias, bool busy);

    const Entry *entry(int row) const;
    const Entry *entry(const QString &alias) const;
    int rowOf(const QString &alias) const;
    static QString address(const HostConfig &host, Origin origin);
    static QString stateText(Transport::State state, bool busy);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void rowChanged(int row);

    QList<Entry> m_entries;
};

} // namespace moetune
