// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/fleet/fleetgroupmodel.h"

#include "report/fleetreport.h"

#include <QColor>

using namespace Qt::StringLiterals;

namespace moetune {

FleetGroupModel::FleetGroupModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void FleetGroupModel::setRecord(const FleetRecord *record) {
    beginResetModel();
    m_record = record;
    m_rows = record ? int(record->groups.size()) : 0;
    m_tuneProgress.clear();
    readSimulated();
    endResetModel();
}

void FleetGroupModel::readSimulated() {
    m_simulated.clear();
    if (!m_record)
        return;
    for (int g = 0; g < m_record->groups.size(); ++g) {
        // A result.json is read once per path; a push record says it without a read.
        const QString &file = m_record->groups.at(g).resultFile;
        bool sim = false;
        for (const FleetHostRecord &h : m_record->hosts)
            sim = sim || (h.group == g && h.push.simulated);
        if (!sim && !file.isEmpty()) {
            auto it = m_resultSimulated.constFind(file);
            if (it == m_resultSimulated.constEnd())
                it = m_resultSimulated.insert(file, FleetReport::groupSimulated(*m_record, g));
            sim = *it;
        }
        m_simulated.append(sim);
    }
}

void FleetGroupModel::refresh() {
    const int rows = m_record ? int(m_record->groups.size()) : 0;
    if (rows != m_rows) {
        beginResetModel();
        m_rows = rows;
        readSimulated();
        endResetModel();
        return;
    }
    readSimulated();
    if (rows > 0)
        emit dataChanged(index(0, 0), index(rows - 1, ColumnCount - 1));
}

void FleetGroupModel::setTuneProgress(int group, qint64 done, qint64 total) {
    if (total <= 0)
        m_tuneProgress.remove(group);
    else
        m_tuneProgress.insert(group, {done, total});
}

QString FleetGroupModel::runText(int group) const {
    if (!m_record || group < 0 || group >= m_record->groups.size())
        return {};
    const FleetGroupRecord &g = m_record->groups.at(group);
    // "[SIMULATED]" first, as the Results page's run list says it: a narrow column never cuts it off.
    if (!g.runId.isEmpty())
        return (m_simulated.value(group) ? tr("[SIMULATED] ") : QString()) +
               tr("on %1, run %2").arg(g.tuneHost, g.runId);
    if (!g.tuneHost.isEmpty())
        return tr("on %1").arg(g.tuneHost);
    return tr("not tuned yet");
}

QString FleetGroupModel::stateText(int group) const {
    if (!m_record || group < 0 || group >= m_record->groups.size())
        return {};
    const FleetGroupRecord &g = m_record->groups.at(group);
    QString s = g.state.isEmpty() ? tr("diagnosed") : g.state;
    if (const auto it = m_tuneProgress.constFind(group); it != m_tuneProgress.constEnd())
        s += u" %1/%2 (%3%)"_s.arg(it->first).arg(it->second).arg(it->first * 100 / it->second);
    if (!g.reason.isEmpty()) // "stopped" + "stopped at gpu-03 (...)" says it once
        s = g.reason.startsWith(g.state, Qt::CaseInsensitive) && !g.state.isEmpty() ? g.reason
                                                                                    : s + u": "_s + g.reason;
    return s;
}

QString FleetGroupModel::apartText(int group) const {
    if (!m_record)
        return {};
    QStringList parts;
    for (const FleetGroupDifference &d : m_record->differences) {
        if (d.first != group && d.second != group)
            continue;
        const int other = d.first == group ? d.second : d.first;
        parts.append(tr("vs group %1: %2").arg(other + 1).arg(d.reasons.join(u"; "_s)));
    }
    return parts.join(u"\n"_s);
}

int FleetGroupModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : m_rows;
}

int FleetGroupModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FleetGroupModel::data(const QModelIndex &index, int role) const {
    if (!m_record || !index.isValid() || index.row() >= m_record->groups.size())
        return {};
    const int row = index.row();
    const FleetGroupRecord &g = m_record->groups.at(row);
    const FleetHostFacts &k = g.group.key;
    if (role == Qt::ForegroundRole && index.column() == StateColumn) {
        if (g.state == "failed"_L1 || g.state == "stopped"_L1)
            return QColor(0xc0, 0x39, 0x2b);
        if (g.state == "rolled out"_L1 || g.state == "undone"_L1)
            return QColor(0x1a, 0x7f, 0x37);
        return {};
    }
    if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case ConfigColumn: {
            QStringList shape{u"E=%1"_s.arg(k.experts), u"N=%1"_s.arg(k.intermediate)};
            if (!k.dtype.isEmpty())
                shape.append(k.dtype);
            if (!k.blockShape.isEmpty())
                shape.append(tr("block %1").arg(k.blockShape));
            return tr("%1\nin %2\n%3 %4, Triton %5, %6, %7")
                .arg(k.missingConfig, k.tritonFolder, k.framework, g.group.frameworkVersions.join(u", "_s),
                     k.tritonVersion, k.deviceName, shape.join(u", "_s));
        }
        case HostsColumn:
            return g.group.hosts.join(u"\n"_s);
        case KernelColumn:
            return tr("sha256 of the server's fused-MoE kernel source: %1").arg(k.kernelSourceHash);
        case ApartColumn:
            return apartText(row);
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case GroupColumn:
        return QString::number(row + 1);
    case ConfigColumn:
        return k.missingConfig;
    case HostsColumn: {
        const QStringList &hosts = g.group.hosts;
        constexpr int shown = 4;
        QString names = QStringList(hosts.mid(0, shown)).join(u", "_s);
        if (hosts.size() > shown)
            names += tr(" +%1 more").arg(hosts.size() - shown);
        return u"%1: %2"_s.arg(hosts.size()).arg(names);
    }
    case KernelColumn:
        return k.kernelSourceHash.left(12);
    case RunColumn:
        return runText(row);
    case StateColumn:
        return stateText(row);
    case ApartColumn: {
        // The first clause of each reason ("Triton 3.5.0 vs 3.6.0"), the sentences in the tooltip.
        QStringList parts;
        for (const FleetGroupDifference &d : m_record->differences) {
            if (d.first != row && d.second != row)
                continue;
            QStringList shortReasons;
            for (const QString &reason : d.reasons)
                shortReasons.append(reason.section(u": "_s, 0, 0));
            parts.append(tr("vs %1: %2")
                             .arg((d.first == row ? d.second : d.first) + 1)
                             .arg(shortReasons.join(u", "_s)));
        }
        return parts.isEmpty() ? tr("the only group") : parts.join(u"; "_s);
    }
    default:
        return {};
    }
}

QVariant FleetGroupModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case GroupColumn:
        return tr("Group");
    case ConfigColumn:
        return tr("Config file");
    case HostsColumn:
        return tr("Hosts");
    case KernelColumn:
        return tr("Kernel");
    case RunColumn:
        return tr("Tuning run");
    case StateColumn:
        return tr("State");
    case ApartColumn:
        return tr("Apart because");
    default:
        return {};
    }
}

} // namespace moetune
