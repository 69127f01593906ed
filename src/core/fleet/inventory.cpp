// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/fleet/inventory.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QMap>
#include <QRegularExpression>
#include <QSet>

#include <yaml-cpp/yaml.h>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// One variable as written, with the line it came from (for errors found after parsing).
struct InventoryVar {
    QString value;
    int line = 0;
};
using InventoryVars = QMap<QString, InventoryVar>;

struct InventoryGroup {
    QStringList hosts;                   // direct members, in order
    QList<QPair<QString, int>> children; // child group and the line naming it
    InventoryVars vars;
};

// What both formats parse into before the hosts are resolved.
struct InventoryModel {
    QString fileName;
    QStringList hostOrder;
    QHash<QString, InventoryVars> hostVars;
    QMap<QString, InventoryGroup> groups;

    void addHost(const QString &group, const QString &host, const InventoryVars &vars) {
        if (!hostVars.contains(host)) {
            hostOrder.append(host);
            hostVars.insert(host, {});
        }
        InventoryVars &mine = hostVars[host];
        for (auto it = vars.cbegin(); it != vars.cend(); ++it)
            mine.insert(it.key(), it.value());
        InventoryGroup &g = groups[group];
        if (!g.hosts.contains(host))
            g.hosts.append(host);
    }
};

QString inventoryError(const QString &fileName, int line, const QString &what) {
    if (line > 0)
        return u"%1:%2: %3"_s.arg(fileName).arg(line).arg(what);
    return u"%1: %2"_s.arg(fileName, what);
}

// Splits an INI host line into words, honouring single and double quotes; a word starting with '#'
// begins a comment.
QStringList inventoryWords(const QString &line) {
    QStringList words;
    QString current;
    bool inWord = false;
    QChar quote;
    for (const QChar c : line) {
        if (!quote.isNull()) {
            if (c == quote)
                quote = QChar();
            else
                current += c;
            continue;
        }
        if (c.isSpace()) {
            if (inWord)
                words.append(current);
            current.clear();
            inWord = false;
            continue;
        }
        if (!inWord && c == u'#')
            break;
        inWord = true;
        if (c == u'"' || c == u'\'')
            quote = c;
        else
            current += c;
    }
    if (inWord)
        words.append(current);
    return words;
}

// Resolves groups (through `children`) and connection variables into hosts. Host variables win, then
// the nearest group's (a child group's before its parents').
bool resolveInventory(const InventoryModel &model, QList<FleetHost> *out, QStringList *groupNames,
                      QString *error) {
    QHash<QString, QStringList> parents;
    for (auto it = model.groups.cbegin(); it != model.groups.cend(); ++it)
        for (const auto &[child, line] : it.value().children) {
            Q_UNUSED(line)
            if (!parents[child].contains(it.key()))
                parents[child].append(it.key());
        }
    // A group that is its own ancestor is an error, as in Ansible.
    for (auto it = model.groups.cbegin(); it != model.groups.cend(); ++it) {
        QStringList stack = parents.value(it.key());
        QSet<QString> seen;
        while (!stack.isEmpty()) {
            const QString g = stack.takeLast();
            if (g == it.key()) {
                const auto &children = model.groups.value(g).children;
                const int line = children.isEmpty() ? 0 : children.first().second;
                if (error)
                    *error = inventoryError(model.fileName, line,
                                            u"group '%1' is its own child through 'children'"_s.arg(g));
                return false;
            }
            if (seen.contains(g))
                continue;
            seen.insert(g);
            stack.append(parents.value(g));
        }
    }
    QHash<QString, QStringList> directGroups;
    for (auto it = model.groups.cbegin(); it != model.groups.cend(); ++it)
        for (const QString &h : it.value().hosts)
            directGroups[h].append(it.key());

    QList<FleetHost> hosts;
    for (const QString &name : model.hostOrder) {
        FleetHost host;
        host.name = name;
        // Breadth-first from the direct groups: each level is nearer than the next.
        QStringList level = directGroups.value(name);
        QStringList ordered;
        QSet<QString> seen;
        while (!level.isEmpty()) {
            QStringList next;
            for (const QString &g : level) {
                if (seen.contains(g))
                    continue;
                seen.insert(g);
                ordered.append(g);
                next.append(parents.value(g));
            }
            level = next;
        }
        const InventoryVars own = model.hostVars.value(name);
        const auto lookup = [&](const QString &key) -> std::optional<InventoryVar> {
            if (own.contains(key))
                return own.value(key);
            for (const QString &g : ordered) {
                const InventoryVars &vars = model.groups.value(g).vars;
                if (vars.contains(key))
                    return vars.value(key);
            }
            return std::nullopt;
        };
        const auto address = lookup(u"ansible_host"_s);
        host.address = address && !address->value.isEmpty() ? address->value : name;
        if (const auto user = lookup(u"ansible_user"_s))
            host.user = user->value;
        if (const auto port = lookup(u"ansible_port"_s)) {
            bool ok = false;
            const int value = port->value.toInt(&ok);
            if (!ok || value < 1 || value > 65535) {
                if (error)
                    *error =
                        inventoryError(model.fileName, port->line,
                                       u"ansible_port of '%1' is '%2', not a port number (1 to 65535)"_s.arg(
                                           name, port->value));
                return false;
            }
            host.port = value;
        }
        if (const auto tags = lookup(u"moetune_tags"_s))
            for (const QString &t : tags->value.split(u','))
                if (const QString tag = t.trimmed(); !tag.isEmpty() && !host.tags.contains(tag))
                    host.tags.append(tag);
        for (const QString &g : ordered)
            if (g != u"all"_s && g != u"ungrouped"_s)
                host.groups.append(g);
        host.groups.sort();
        hosts.append(host);
    }
    *out = hosts;
    for (auto it = model.groups.cbegin(); it != model.groups.cend(); ++it)
        if (it.key() != u"all"_s && it.key() != u"ungrouped"_s)
            groupNames->append(it.key());
    groupNames->sort();
    return true;
}

// One "[a:b]" or "[a:b:step]" range.
QStringList expandOneRange(const QString &from, const QString &to, const QString &stepText, QString *error) {
    int step = 1;
    if (!stepText.isNull()) {
        bool ok = false;
        step = stepText.toInt(&ok);
        if (!ok || step < 1) {
            *error = u"the range step '%1' is not a positive number"_s.arg(stepText);
            return {};
        }
    }
    bool okFrom = false;
    bool okTo = false;
    const int a = from.toInt(&okFrom);
    const int b = to.toInt(&okTo);
    QStringList values;
    if (okFrom && okTo && !from.startsWith(u'-') && !to.startsWith(u'-')) {
        if (a > b) {
            *error = u"the range [%1:%2] runs backwards"_s.arg(from, to);
            return {};
        }
        if ((b - a) / step > 100000) {
            *error = u"the range [%1:%2] names more than 100000 hosts"_s.arg(from, to);
            return {};
        }
        // A leading zero pads every value to the first bound's width, as Ansible does.
        const int width = from.startsWith(u'0') ? int(from.size()) : 0;
        for (int v = a; v <= b; v += step)
            values.append(QString::number(v).rightJustified(width, u'0'));
        return values;
    }
    if (from.size() == 1 && to.size() == 1 && from.at(0).isLetter() && to.at(0).isLetter()) {
        if (from.at(0) > to.at(0)) {
            *error = u"the range [%1:%2] runs backwards"_s.arg(from, to);
            return {};
        }
        for (char16_t c = from.at(0).unicode(); c <= to.at(0).unicode(); c = char16_t(c + step))
            values.append(QString(QChar(c)));
        return values;
    }
    *error = u"the range [%1:%2] is neither numbers nor single letters"_s.arg(from, to);
    return {};
}

} // namespace

QStringList FleetInventory::expandRange(const QString &pattern, QString *error) {
    QString localError;
    QString &err = error ? *error : localError;
    const qsizetype open = pattern.indexOf(u'[');
    if (open < 0) {
        if (pattern.contains(u']')) {
            err = u"'%1' has a ']' without '['"_s.arg(pattern);
            return {};
        }
        return {pattern};
    }
    const qsizetype close = pattern.indexOf(u']', open);
    if (close < 0) {
        err = u"'%1' has a '[' without ']'"_s.arg(pattern);
        return {};
    }
    const QStringList parts = pattern.mid(open + 1, close - open - 1).split(u':');
    if (parts.size() < 2 || parts.size() > 3 || parts.at(0).isEmpty() || parts.at(1).isEmpty()) {
        err = u"'%1': a range is [first:last] or [first:last:step]"_s.arg(pattern);
        return {};
    }
    const QStringList values =
        expandOneRange(parts.at(0), parts.at(1), parts.size() == 3 ? parts.at(2) : QString(), &err);
    if (values.isEmpty()) {
        err = u"'%1': %2"_s.arg(pattern, err);
        return {};
    }
    const QStringList rest = expandRange(pattern.mid(close + 1), &err);
    if (rest.isEmpty())
        return {};
    QStringList names;
    for (const QString &v : values)
        for (const QString &r : rest)
            names.append(pattern.left(open) + v + r);
    return names;
}

std::optional<FleetInventory> FleetInventory::fromIni(const QByteArray &text, const QString &fileName,
                                                      QString *error) {
    InventoryModel model;
    model.fileName = fileName;
    QString group = u"ungrouped"_s;
    QString kind; // "", "vars" or "children"
    const QList<QByteArray> lines = text.split('\n');
    const auto fail = [&](int line, const QString &what) {
        if (error)
            *error = inventoryError(fileName, line, what);
        return std::nullopt;
    };
    for (int i = 0; i < lines.size(); ++i) {
        const int lineNo = i + 1;
        const QString line = QString::fromUtf8(lines.at(i)).trimmed();
        if (line.isEmpty() || line.startsWith(u'#') || line.startsWith(u';'))
            continue;
        if (line.startsWith(u'[')) {
            if (!line.endsWith(u']'))
                return fail(lineNo, u"the section header '%1' has no closing ']'"_s.arg(line));
            const QString header = line.mid(1, line.size() - 2).trimmed();
            const qsizetype colon = header.indexOf(u':');
            group = colon < 0 ? header : header.left(colon);
            kind = colon < 0 ? QString() : header.mid(colon + 1);
            if (group.isEmpty() || group.contains(QRegularExpression(u"[\\s\\[\\]]"_s)))
                return fail(lineNo, u"'%1' is not a group name"_s.arg(header));
            if (!kind.isEmpty() && kind != u"vars"_s && kind != u"children"_s)
                return fail(lineNo,
                            u"[%1]: a section is [group], [group:vars] or [group:children]"_s.arg(header));
            model.groups[group]; // an empty group still exists
            continue;
        }
        if (kind == u"vars"_s) {
            const qsizetype eq = line.indexOf(u'=');
            if (eq <= 0)
                return fail(lineNo, u"[%1:vars] expects key=value, found '%2'"_s.arg(group, line));
            model.groups[group].vars.insert(line.left(eq).trimmed(),
                                            {line.mid(eq + 1).trimmed().remove(u'"').remove(u'\''), lineNo});
            continue;
        }
        const QStringList words = inventoryWords(line);
        if (words.isEmpty())
            continue;
        if (kind == u"children"_s) {
            if (words.size() != 1)
                return fail(lineNo,
                            u"[%1:children] expects one group name a line, found '%2'"_s.arg(group, line));
            model.groups[group].children.append({words.first(), lineNo});
            model.groups[words.first()];
            continue;
        }
        InventoryVars vars;
        for (qsizetype w = 1; w < words.size(); ++w) {
            const qsizetype eq = words.at(w).indexOf(u'=');
            if (eq <= 0)
                return fail(lineNo, u"expected key=value after the host '%1', found '%2'"_s.arg(words.first(),
                                                                                                words.at(w)));
            vars.insert(words.at(w).left(eq), {words.at(w).mid(eq + 1), lineNo});
        }
        QString rangeError;
        const QStringList names = expandRange(words.first(), &rangeError);
        if (names.isEmpty())
            return fail(lineNo, rangeError);
        for (const QString &name : names)
            model.addHost(group, name, vars);
    }
    FleetInventory inventory;
    if (!resolveInventory(model, &inventory.m_hosts, &inventory.m_groups, error))
        return std::nullopt;
    return inventory;
}

namespace {

int yamlLine(const YAML::Node &node) {
    return node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
}

QString yamlScalar(const YAML::Node &node) {
    if (node.IsSequence()) { // moetune_tags as a list
        QStringList items;
        for (const YAML::Node &item : node)
            if (item.IsScalar())
                items.append(QString::fromStdString(item.Scalar()));
        return items.join(u',');
    }
    return node.IsScalar() ? QString::fromStdString(node.Scalar()) : QString();
}

class YamlInventoryReader {
public:
    explicit YamlInventoryReader(InventoryModel *model)
        : m_model(model) {}
    QString error;

    bool readGroup(const QString &name, const YAML::Node &node, int depth) {
        m_model->groups[name];
        if (depth > 64)
            return fail(node, u"groups nest more than 64 deep under '%1'"_s.arg(name));
        if (node.IsNull())
            return true;
        if (!node.IsMap())
            return fail(node, u"group '%1' must be a mapping with hosts, children or vars"_s.arg(name));
        for (const auto &entry : node) {
            const QString key = QString::fromStdString(entry.first.as<std::string>());
            const YAML::Node &value = entry.second;
            if (key == u"hosts"_s) {
                if (!readHosts(name, value))
                    return false;
            } else if (key == u"vars"_s) {
                InventoryVars vars;
                if (!readVars(value, u"the vars of group '%1'"_s.arg(name), &vars))
                    return false;
                for (auto it = vars.cbegin(); it != vars.cend(); ++it)
                    m_model->groups[name].vars.insert(it.key(), it.value());
            } else if (key == u"children"_s) {
                if (value.IsNull())
                    continue;
                if (!value.IsMap())
                    return fail(value, u"the children of '%1' must be a mapping of group names"_s.arg(name));
                for (const auto &child : value) {
                    const QString childName = QString::fromStdString(child.first.as<std::string>());
                    m_model->groups[name].children.append({childName, yamlLine(child.first)});
                    if (!readGroup(childName, child.second, depth + 1))
                        return false;
                }
            } else {
                return fail(
                    entry.first,
                    u"group '%1' has the key '%2'; a group has hosts, children or vars"_s.arg(name, key));
            }
        }
        return true;
    }

private:
    InventoryModel *m_model;

    bool fail(const YAML::Node &node, const QString &what) {
        error = inventoryError(m_model->fileName, yamlLine(node), what);
        return false;
    }

    bool readVars(const YAML::Node &node, const QString &what, InventoryVars *vars) {
        if (node.IsNull())
            return true;
        if (!node.IsMap())
            return fail(node, u"%1 must be a mapping of names to values"_s.arg(what));
        for (const auto &entry : node)
            vars->insert(QString::fromStdString(entry.first.as<std::string>()),
                         {yamlScalar(entry.second), yamlLine(entry.second)});
        return true;
    }

    bool readHosts(const QString &group, const YAML::Node &node) {
        if (node.IsNull())
            return true;
        if (!node.IsMap())
            return fail(node, u"the hosts of '%1' must be a mapping of host names"_s.arg(group));
        for (const auto &entry : node) {
            const QString pattern = QString::fromStdString(entry.first.as<std::string>());
            InventoryVars vars;
            if (!readVars(entry.second, u"host '%1'"_s.arg(pattern), &vars))
                return false;
            QString rangeError;
            const QStringList names = FleetInventory::expandRange(pattern, &rangeError);
            if (names.isEmpty())
                return fail(entry.first, rangeError);
            for (const QString &n : names)
                m_model->addHost(group, n, vars);
        }
        return true;
    }
};

} // namespace

std::optional<FleetInventory> FleetInventory::fromYaml(const QByteArray &text, const QString &fileName,
                                                       QString *error) {
    InventoryModel model;
    model.fileName = fileName;
    YamlInventoryReader reader(&model);
    try {
        const YAML::Node root = YAML::Load(text.toStdString());
        if (!root.IsMap()) {
            if (error)
                *error = inventoryError(fileName, yamlLine(root),
                                        u"a YAML inventory is a mapping of groups (usually 'all:')"_s);
            return std::nullopt;
        }
        for (const auto &entry : root)
            if (!reader.readGroup(QString::fromStdString(entry.first.as<std::string>()), entry.second, 0)) {
                if (error)
                    *error = reader.error;
                return std::nullopt;
            }
    } catch (const YAML::Exception &e) {
        if (error)
            *error = inventoryError(fileName, e.mark.line >= 0 ? e.mark.line + 1 : 0,
                                    QString::fromStdString(e.msg));
        return std::nullopt;
    }
    FleetInventory inventory;
    if (!resolveInventory(model, &inventory.m_hosts, &inventory.m_groups, error))
        return std::nullopt;
    return inventory;
}

std::optional<FleetInventory> FleetInventory::load(const QString &path, QString *error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = u"%1: %2"_s.arg(path, file.errorString());
        return std::nullopt;
    }
    const qint64 limit = qint64(64) * 1024 * 1024;
    if (file.size() > limit) {
        if (error)
            *error = u"%1: larger than 64 MiB; not an inventory"_s.arg(path);
        return std::nullopt;
    }
    const QByteArray text = file.readAll();
    const QString suffix = QFileInfo(path).suffix().toLower();
    bool yaml = suffix == u"yml"_s || suffix == u"yaml"_s;
    if (!yaml && suffix != u"ini"_s) {
        // No telling suffix (Ansible's default is a file called "hosts"): the first significant line
        // decides; "key:" at the start is YAML, "[group]" or a host line is INI.
        for (const QByteArray &raw : text.split('\n')) {
            const QByteArray line = raw.trimmed();
            if (line.isEmpty() || line.startsWith('#') || line.startsWith(';') || line == "---")
                continue;
            yaml = line.endsWith(':') && !line.startsWith('[');
            break;
        }
    }
    return yaml ? fromYaml(text, path, error) : fromIni(text, path, error);
}

FleetInventory FleetInventory::fromHosts(QList<FleetHost> hosts) {
    FleetInventory inventory;
    QSet<QString> groups;
    for (const FleetHost &h : hosts)
        for (const QString &g : h.groups)
            groups.insert(g);
    inventory.m_groups = QStringList(groups.cbegin(), groups.cend());
    inventory.m_groups.sort();
    inventory.m_hosts = std::move(hosts);
    return inventory;
}

QStringList FleetInventory::groups() const {
    return m_groups;
}

QStringList FleetInventory::tags() const {
    QStringList all;
    for (const FleetHost &h : m_hosts)
        for (const QString &t : h.tags)
            if (!all.contains(t))
                all.append(t);
    all.sort();
    return all;
}

std::optional<QList<FleetHost>> FleetInventory::select(const FleetSelection &selection,
                                                       QString *error) const {
    const int kinds = int(selection.all) + int(!selection.group.isEmpty()) + int(!selection.tag.isEmpty()) +
                      int(!selection.names.isEmpty());
    const auto fail = [&](const QString &what) {
        if (error)
            *error = what;
        return std::nullopt;
    };
    if (kinds != 1)
        return fail(u"choose the hosts one way: all, a group, a tag or a list of names"_s);
    QList<FleetHost> chosen;
    if (selection.all) {
        chosen = m_hosts;
    } else if (!selection.group.isEmpty()) {
        if (selection.group == u"all"_s)
            chosen = m_hosts;
        else if (!m_groups.contains(selection.group))
            return fail(u"no group '%1' in the inventory (groups: %2)"_s.arg(
                selection.group, m_groups.isEmpty() ? u"none"_s : m_groups.join(u", "_s)));
        for (const FleetHost &h : m_hosts)
            if (selection.group != u"all"_s && h.groups.contains(selection.group))
                chosen.append(h);
    } else if (!selection.tag.isEmpty()) {
        const QStringList known = tags();
        if (!known.contains(selection.tag))
            return fail(u"no host has the tag '%1' (tags: %2)"_s.arg(
                selection.tag, known.isEmpty() ? u"none"_s : known.join(u", "_s)));
        for (const FleetHost &h : m_hosts)
            if (h.tags.contains(selection.tag))
                chosen.append(h);
    } else {
        QStringList unknown;
        for (const QString &name : selection.names) {
            const auto it = std::find_if(m_hosts.cbegin(), m_hosts.cend(),
                                         [&](const FleetHost &h) { return h.name == name; });
            if (it == m_hosts.cend())
                unknown.append(name);
            else if (!chosen.contains(*it))
                chosen.append(*it);
        }
        if (!unknown.isEmpty())
            return fail(u"not in the inventory: %1"_s.arg(unknown.join(u", "_s)));
    }
    if (chosen.isEmpty())
        return fail(u"the selection names no host"_s);
    return chosen;
}

} // namespace moetune
