// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hostlistmodel.h"

#include "app/hosts/hosticons.h"
#include "remote/hosts/hoststore.h"

#include <QHash>

using namespace Qt::StringLiterals;

namespace moetune {

QString HostListModel::localAlias() {
    return HostStore::localAlias();
}

HostListModel::HostListModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void HostListModel::setHosts(const QList<HostConfig> &hosts, const HostConfig &local) {
    QHash<QString, Entry> old;
    for (const Entry &e : std::as_const(m_entries))
        old.insert(e.host.alias, e);
    beginResetModel();
    m_entries.clear();
    auto add = [&](const HostConfig &h, Origin origin) {
        Entry e;
        e.host = h;
        e.origin = origin;
        if (const auto it = old.constFind(h.alias); it != old.constEnd()) {
            e.state = it->state;
            e.message = it->message;
            e.busy = it->busy;
        }
        m_entries.append(e);
    };
    for (const HostConfig &h : hosts) {
        if (h.alias != localAlias())
            add(h, h.fromSshConfig ? Origin::SshConfig : Origin::App);
    }
    add(local, Origin::Local);
    endResetModel();
}

void HostListModel::setState(const QString &alias, Transport::State state, const QString &message) {
    const int row = rowOf(alias);
    if (row < 0)
        return;
    m_entries[row].state = state;
    m_entries[row].message = message;
    rowChanged(row);
}

void HostListModel::setBusy(const QString &alias, bool busy) {
    const int row = rowOf(alias);
    if (row < 0 || m_entries[row].busy == busy)
        return;
    m_entries[row].busy = busy;
    rowChanged(row);
}

void HostListModel::rowChanged(int row) {
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

const HostListModel::Entry *HostListModel::entry(int row) const {
    return row >= 0 && row < m_entries.size() ? &m_entries.at(row) : nullptr;
}

const HostListModel::Entry *HostListModel::entry(const QString &alias) const {
    return entry(rowOf(alias));
}

int HostListModel::rowOf(const QString &alias) const {
    for (int i = 0; i < m_entries.size(); ++i) {
        if (m_entries.at(i).host.alias == alias)
            return i;
    }
    return -1;
}

QString HostListModel::address(const HostConfig &host, Origin origin) {
    if (origin == Origin::Local)
        return tr("this machine");
    if (host.isPractice())
        return tr("this machine, sandbox %1").arg(host.practiceRoot);
    QString target = host.hostName.isEmpty() ? host.alias : host.hostName;
    if (!host.user.isEmpty())
        target = host.user + u'@' + target;
    if (host.port > 0 && host.port != 22)
        target += u':' + QString::number(host.port);
    if (!host.proxyJump.isEmpty())
        target += tr(" via %1").arg(host.proxyJump);
    return target;
}

QString HostListModel::stateText(Transport::State state, bool busy) {
    QString text;
    switch (state) {
    case Transport::State::Disconnected:
        text = tr("Not connected");
        break;
    case Transport::State::Connecting:
        text = tr("Connecting...");
        break;
    case Transport::State::AwaitingUser:
        text = tr("Waiting for you");
        break;
    case Transport::State::Connected:
        text = tr("Connected");
        break;
    case Transport::State::Reconnecting:
        text = tr("Reconnecting...");
        break;
    case Transport::State::Failed:
        text = tr("Failed");
        break;
    }
    return busy ? tr("%1, working").arg(text) : text;
}

int HostListModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_entries.size());
}

int HostListModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HostListModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Entry &e = m_entries.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return e.host.label();
        case AddressColumn:
            return address(e.host, e.origin);
        case SourceColumn:
            return e.origin == Origin::SshConfig ? tr("ssh config")
                   : e.origin == Origin::App     ? tr("app")
                                                 : tr("built-in");
        case StateColumn:
            return stateText(e.state, e.busy);
        }
        break;
    case Qt::DecorationRole:
        if (index.column() == NameColumn)
            return HostIcons::state(e.state);
        break;
    case Qt::ToolTipRole:
        if (!e.message.isEmpty())
            return e.message;
        return address(e.host, e.origin);
    case Qt::ForegroundRole:
        if (index.column() == StateColumn && e.state == Transport::State::Failed)
            return HostIcons::stateColor(e.state);
        break;
    case AliasRole:
        return e.host.alias;
    case StateRole:
        return int(e.state);
    case IsLocalRole:
        return e.origin == Origin::Local;
    case MessageRole:
        return e.message;
    default:
        break;
    }
    return {};
}

QVariant HostListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Host");
    case AddressColumn:
        return tr("Address");
    case SourceColumn:
        return tr("From");
    case StateColumn:
        return tr("State");
    }
    return {};
}

} // namespace moetune
