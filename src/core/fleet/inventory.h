// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// One host of a fleet inventory: the name the inventory gives it and how to reach it.
struct FleetHost {
    QString name;       // the inventory's host name (an Ansible host, or an ssh config alias)
    QString address;    // ansible_host, else the name
    int port = 0;       // ansible_port; 0 = not set (22 or the ssh config's Port)
    QString user;       // ansible_user; "" = not set (the current user or the ssh config's User)
    QStringList groups; // every group the host is in, parents through `children` included, sorted
    QStringList tags;   // the host's `moetune_tags` variable (comma-separated in INI, a list in YAML)

    bool operator==(const FleetHost &) const = default;
};

// Which hosts of an inventory a fleet command works on. Exactly one of: all, a group, a tag, names.
struct FleetSelection {
    bool all = false;
    QString group;
    QString tag;
    QStringList names;
};

// A static Ansible inventory (INI or YAML: groups, `children`, host and group `vars`, ranges such as
// web[01:03] and db-[a:c]), or the concrete hosts of an ssh config. Only the connection variables
// (ansible_host, ansible_port, ansible_user) and moetune_tags are kept; other variables are read and
// ignored. Dynamic inventories (scripts, plugins) are not run.
class FleetInventory {
public:
    // Reads a file: YAML when its name ends in .yml/.yaml or its first significant line looks like YAML
    // (`key:` with no `[section]` before it), INI otherwise. The error names the file and the line.
    static std::optional<FleetInventory> load(const QString &path, QString *error);
    static std::optional<FleetInventory> fromIni(const QByteArray &text, const QString &fileName,
                                                 QString *error);
    static std::optional<FleetInventory> fromYaml(const QByteArray &text, const QString &fileName,
                                                  QString *error);
    // Expands one Ansible host pattern with ranges ("web[01:03]", "n[a:c]", "x[0:10:5]"); a name without
    // brackets is itself. Empty with *error set for a malformed or reversed range.
    static QStringList expandRange(const QString &pattern, QString *error);

    QList<FleetHost> hosts() const { return m_hosts; } // in the order the inventory first names them
    QStringList groups() const;                        // every group name, sorted ("all" not included)
    QStringList tags() const;                          // every tag, sorted

    // The selected hosts; unknown group, tag or host names are errors (all of them named), as is a
    // selection that picks nothing or more than one kind.
    std::optional<QList<FleetHost>> select(const FleetSelection &selection, QString *error) const;

    // Builds an inventory from hosts already resolved elsewhere (the ssh config's aliases).
    static FleetInventory fromHosts(QList<FleetHost> hosts);

private:
    QList<FleetHost> m_hosts;
    QStringList m_groups;
};

} // namespace moetune
