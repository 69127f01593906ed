// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/fleet/fleethostmodel.h"

#include <QColor>
#include <QLocale>

#include <algorithm>
#include <utility>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// Colours that read on light and dark palettes alike.
QColor stageColor(FleetHostStage s) {
    if (fleetStageIsTerminalFailure(s))
        return QColor(0xc0, 0x39, 0x2b);
    switch (s) {
    case FleetHostStage::Proved:
    case FleetHostStage::Undone:
        return QColor(0x1a, 0x7f, 0x37);
    case FleetHostStage::Connecting:
    case FleetHostStage::Diagnosing:
    case FleetHostStage::Tuning:
    case FleetHostStage::Importing:
    case FleetHostStage::Pushing:
    case FleetHostStage::Restarting:
    case FleetHostStage::Undoing:
        return QColor(0x1f, 0x6f, 0xc5);
    default:
        return {};
    }
}

} // namespace

FleetHostModel::FleetHostModel(QObject *parent)
    : QAbstractTableModel(parent) {
    m_timer.setSingleShot(true);
    m_timer.setInterval(flushMs);
    connect(&m_timer, &QTimer::timeout, this, &FleetHostModel::flush);
}

void FleetHostModel::setRecord(const FleetRecord *record) {
    beginResetModel();
    m_record = record;
    m_pending.clear();
    m_all = false;
    m_tuneProgress.clear();
    m_timer.stop();
    endResetModel();
}

void FleetHostModel::schedule() {
    if (!m_timer.isActive())
        m_timer.start();
}

void FleetHostModel::hostChanged(int index) {
    if (!m_record || index < 0)
        return;
    m_pending.insert(index);
    schedule();
}

void FleetHostModel::requestFlush() {
    m_requested = true;
    schedule();
}

void FleetHostModel::allChanged() {
    m_all = true;
    schedule();
}

void FleetHostModel::setTuneProgress(int group, qint64 done, qint64 total) {
    if (total <= 0)
        m_tuneProgress.remove(group);
    else
        m_tuneProgress.insert(group, {done, total});
    if (!m_record || group < 0 || group >= m_record->groups.size())
        return;
    const QString &host = m_record->groups.at(group).tuneHost;
    for (int i = 0; i < m_record->hosts.size(); ++i)
        if (m_record->hosts.at(i).host.name == host)
            hostChanged(i);
}

void FleetHostModel::flush() {
    m_timer.stop();
    const bool requested = std::exchange(m_requested, false);
    if (!m_record)
        return;
    const int rows = rowCount();
    if (m_all) {
        m_all = false;
        m_pending.clear();
        if (rows > 0)
            emit dataChanged(index(0, 0), index(rows - 1, ColumnCount - 1));
    } else if (!m_pending.isEmpty()) {
        // One dataChanged per run of adjacent rows.
        QList<int> list(m_pending.cbegin(), m_pending.cend());
        m_pending.clear();
        std::sort(list.begin(), list.end());
        int first = -1;
        int last = -1;
        auto tell = [&] {
            if (first >= 0 && first < rows)
                emit dataChanged(index(first, 0), index(std::min(last, rows - 1), ColumnCount - 1));
        };
        for (int r : list) {
            if (first >= 0 && r == last + 1) {
                last = r;
                continue;
            }
            tell();
            first = last = r;
        }
        tell();
    } else if (!requested) {
        return;
    }
    ++m_flushes;
    emit flushed();
}

QString FleetHostModel::stageText(int row) const {
    if (!m_record || row < 0 || row >= m_record->hosts.size())
        return {};
    const FleetHostRecord &h = m_record->hosts.at(row);
    QString s = fleetStageText(h.stage);
    if (h.stage == FleetHostStage::Tuning && h.group >= 0) {
        if (const auto it = m_tuneProgress.constFind(h.group); it != m_tuneProgress.constEnd())
            s += u" %1/%2 (%3%)"_s.arg(it->first).arg(it->second).arg(it->first * 100 / it->second);
    }
    if (!h.reason.isEmpty()) {
        // A reason that starts with the stage's own word ("diagnosed: wants ...") says it once.
        QString reason = h.reason;
        const QString word = fleetStageText(h.stage) + u':';
        if (reason.startsWith(word, Qt::CaseInsensitive))
            reason = reason.mid(word.size()).trimmed();
        s += u": "_s + reason;
    }
    return s;
}

int FleetHostModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() || !m_record ? 0 : int(m_record->hosts.size());
}

int FleetHostModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FleetHostModel::data(const QModelIndex &index, int role) const {
    if (!m_record || !index.isValid() || index.row() >= m_record->hosts.size())
        return {};
    const FleetHostRecord &h = m_record->hosts.at(index.row());
    if (role == StageRole)
        return int(h.stage);
    if (role == HostNameRole)
        return h.host.name;
    if (role == GroupRole)
        return h.group;
    if (role == Qt::ForegroundRole && index.column() == StageColumn) {
        const QColor c = stageColor(h.stage);
        return c.isValid() ? QVariant(c) : QVariant();
    }
    if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case HostColumn: {
            QString where = h.host.address.isEmpty() ? h.host.name : h.host.address;
            if (h.host.port > 0)
                where += u":%1"_s.arg(h.host.port);
            if (!h.host.user.isEmpty())
                where = h.host.user + u'@' + where;
            QString tip = where;
            if (!h.host.groups.isEmpty())
                tip += u"\n"_s + tr("Inventory groups: %1").arg(h.host.groups.join(u", "_s));
            if (!h.host.tags.isEmpty())
                tip += u"\n"_s + tr("Tags: %1").arg(h.host.tags.join(u", "_s));
            return tip;
        }
        case FindingsColumn:
            return h.findings.isEmpty() ? QVariant() : QVariant(h.findings.join(u'\n'));
        case KernelColumn:
            return h.facts.kernelSourceHash.isEmpty()
                       ? QVariant()
                       : QVariant(tr("Kernel source sha256: %1").arg(h.facts.kernelSourceHash));
        case GroupColumn:
            if (h.group >= 0 && h.group < m_record->groups.size())
                return tr("Wants %1 (%2)")
                    .arg(m_record->groups.at(h.group).group.key.missingConfig,
                         m_record->groups.at(h.group).group.key.tritonFolder);
            return {};
        case StageColumn: {
            QString tip = stageText(index.row());
            if (!h.proof.isEmpty())
                tip += u"\n"_s + tr("Proof: %1").arg(h.proof);
            if (!h.servingVerdict.isEmpty())
                tip += u"\n"_s + tr("Serving: %1").arg(h.servingVerdict);
            if (!h.runId.isEmpty())
                tip += u"\n"_s + tr("Run on this host: %1").arg(h.runId);
            return tip;
        }
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    const bool known = !h.facts.framework.isEmpty() || !h.gpu.isEmpty() || !h.framework.isEmpty();
    switch (index.column()) {
    case HostColumn:
        return h.host.name;
    case GpuColumn:
        return h.gpu;
    case FrameworkColumn:
        return QString(h.framework + u' ' + h.frameworkVersion).trimmed();
    case TritonColumn:
        return h.triton;
    case ModelColumn:
        return h.model;
    case KernelColumn:
        if (h.moeKernel.isEmpty())
            return {};
        return h.facts.kernelSourceHash.isEmpty()
                   ? h.moeKernel
                   : u"%1 (%2)"_s.arg(h.moeKernel, h.facts.kernelSourceHash.left(8));
    case FindingsColumn:
        if (h.findings.isEmpty())
            return known ? tr("none") : QString();
        return h.findings.size() == 1
                   ? h.findings.first()
                   : tr("%1 (+%2 more)").arg(h.findings.first()).arg(h.findings.size() - 1);
    case GroupColumn:
        if (h.group >= 0)
            return QString::number(h.group + 1);
        if (m_record->nothingMissing.contains(h.host.name))
            return tr("none needed");
        return known ? tr("none") : QString();
    case StageColumn:
        return stageText(index.row());
    default:
        return {};
    }
}

QVariant FleetHostModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case HostColumn:
        return tr("Host");
    case GpuColumn:
        return tr("GPU");
    case FrameworkColumn:
        return tr("Framework");
    case TritonColumn:
        return tr("Triton");
    case ModelColumn:
        return tr("Model");
    case KernelColumn:
        return tr("MoE kernel");
    case FindingsColumn:
        return tr("Findings");
    case GroupColumn:
        return tr("Group");
    case StageColumn:
        return tr("Stage");
    default:
        return {};
    }
}

} // namespace moetune
