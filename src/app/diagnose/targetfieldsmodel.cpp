// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/diagnose/targetfieldsmodel.h"

#include "app/widgets/severitystyle.h"

#include <QFontDatabase>

using namespace Qt::StringLiterals;

namespace moetune {

TargetFieldsModel::TargetFieldsModel(QObject *parent)
    : QAbstractTableModel(parent) {}

static QString projectionState(bool missing, bool fellBack, bool loaded, const QString &fallbackFolder) {
    if (missing)
        return QObject::tr("missing: server uses built-in defaults");
    if (fellBack) {
        return fallbackFolder.isEmpty() ? QObject::tr("fell back to another Triton version's config")
                                        : QObject::tr("fell back to %1").arg(fallbackFolder);
    }
    if (loaded)
        return QObject::tr("tuned config found");
    return QObject::tr("no lookup of it in this log");
}

// The _down file of an SGLang shape: a log that names neither its lookup nor its load. SGLang read
// _down files only after it kept configs in triton_X_Y_Z folders, so a lookup outside such a folder is
// from a version that never asks for one (docs/servers.md section 1).
static QString downState(const TuningTarget &t) {
    if (t.downMissing || t.downFellBack || t.downLoaded)
        return projectionState(t.downMissing, t.downFellBack, t.downLoaded, t.fallbackFolder);
    if (t.tritonFolder.isEmpty() && !t.configRoot.isEmpty())
        return QObject::tr("not asked for by this server version (it predates _down files)");
    return QObject::tr("no lookup of it in this log");
}

void TargetFieldsModel::setTarget(const std::optional<TuningTarget> &target) {
    beginResetModel();
    m_rows.clear();
    if (target) {
        const TuningTarget &t = *target;
        const ConfigName &n = t.name;
        if (t.kernel == TuningTarget::Kernel::BlockFp8Gemm) {
            // The dense block-FP8 GEMM: its own N and K, one file, no Triton folder, no down file.
            m_rows.append(
                {u"kernel"_s, tr("Kernel"), tr("W8A8 block-FP8 GEMM (dense, not MoE)"), false, false});
            m_rows.append({u"framework"_s, tr("Framework"), frameworkName(t.framework), false, false});
            m_rows.append({u"n"_s, tr("N"), QString::number(n.n), false, false});
            m_rows.append({u"k"_s, tr("K"), QString::number(t.denseK), false, false});
            m_rows.append({u"device"_s, tr("Device"), n.deviceName.isEmpty() ? tr("(empty)") : n.deviceName,
                           false, true});
            m_rows.append(
                {u"dtype"_s, tr("Dtype"), n.dtype.isEmpty() ? u"fp8_w8a8"_s : n.dtype, false, false});
            m_rows.append(
                {u"blockShape"_s, tr("Block shape"),
                 n.blockShape ? u"[%1, %2]"_s.arg((*n.blockShape)[0]).arg((*n.blockShape)[1]) : tr("none"),
                 false, false});
            m_rows.append({u"upPath"_s, tr("Config file"), t.upPath(), true, true});
            endResetModel();
            return;
        }
        m_rows.append({u"framework"_s, tr("Framework"), frameworkName(t.framework), false, false});
        m_rows.append({u"triton"_s, tr("Triton version"),
                       t.tritonVersion ? t.tritonVersion->toString() : tr("not shown in the log"), false,
                       false});
        if (!t.tritonFolder.isEmpty()) {
            m_rows.append(
                {u"tritonFolder"_s, tr("Triton folder"),
                 t.tritonFolderMissing ? tr("%1 (does not exist)").arg(t.tritonFolder) : t.tritonFolder,
                 t.tritonFolderMissing, true});
        }
        if (!t.fallbackFolder.isEmpty())
            m_rows.append({u"fallbackFolder"_s, tr("Fallback folder"), t.fallbackFolder, false, true});
        m_rows.append({u"experts"_s, tr("Experts (E)"), QString::number(n.experts), false, false});
        m_rows.append({u"n"_s, tr("N (per rank)"), QString::number(n.n), false, false});
        if (t.intermediateN() != n.n || t.weightN() != n.n) {
            // int4_w4a16 packs two weights per byte: say which N is which (the spec takes the first).
            m_rows.append({u"nIntermediate"_s, tr("N of the layer (intermediate / TP)"),
                           QString::number(t.intermediateN()), false, false});
            m_rows.append(
                {u"nWeight"_s, tr("N of the packed weight"), QString::number(t.weightN()), false, false});
        }
        m_rows.append(
            {u"device"_s, tr("Device"), n.deviceName.isEmpty() ? tr("(empty)") : n.deviceName, false, true});
        m_rows.append({u"dtype"_s, tr("Dtype"),
                       !n.dtype.isEmpty() ? n.dtype
                       : t.dtypeCandidates().contains(u"int8_w8a8"_s)
                           ? tr("bf16/fp16 or int8_w8a8 (vLLM names both files alike)")
                           : u"bf16/fp16"_s,
                       false, false});
        m_rows.append(
            {u"blockShape"_s, tr("Block shape"),
             n.blockShape ? u"[%1, %2]"_s.arg((*n.blockShape)[0]).arg((*n.blockShape)[1]) : tr("none"), false,
             false});
        if (n.perChannelQuant)
            m_rows.append({u"perChannelQuant"_s, tr("Per-channel quant"), tr("yes"), false, false});
        m_rows.append({u"up"_s, tr("Up projection"),
                       projectionState(t.upMissing, t.upFellBack, t.upLoaded, t.fallbackFolder),
                       t.upMissing || t.upFellBack, false});
        if (t.framework != Framework::VLLM) {
            m_rows.append(
                {u"down"_s, tr("Down projection"), downState(t), t.downMissing || t.downFellBack, false});
        }
        if (!t.configRoot.isEmpty())
            m_rows.append({u"configRoot"_s, tr("Config root"), t.configRoot, false, true});
        m_rows.append({u"upPath"_s, tr("Up file"), t.upPath(), false, true});
        if (t.framework != Framework::VLLM)
            m_rows.append({u"downPath"_s, tr("Down file"), t.downPath(), false, true});
    }
    endResetModel();
}

QString TargetFieldsModel::value(const QString &key) const {
    for (const Row &row : m_rows) {
        if (row.key == key)
            return row.value;
    }
    return {};
}

int TargetFieldsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int TargetFieldsModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TargetFieldsModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == FieldColumn)
            return row.label;
        // A path breaks after a '/' or ',' when it wraps: never inside a folder name.
        if (row.path) {
            QString shown = row.value;
            shown.replace(u'/', u"/\u200b"_s).replace(u',', u",\u200b"_s);
            return shown;
        }
        return row.value;
    case Qt::EditRole:
        return index.column() == FieldColumn ? row.label : row.value;
    case Qt::ToolTipRole:
        return row.value;
    case Qt::ForegroundRole:
        if (index.column() == ValueColumn && row.problem)
            return SeverityStyle::color(Severity::Error);
        break;
    case Qt::FontRole:
        if (index.column() == ValueColumn && row.path)
            return QFontDatabase::systemFont(QFontDatabase::FixedFont);
        break;
    case KeyRole:
        return row.key;
    case ProblemRole:
        return row.problem;
    }
    return {};
}

QVariant TargetFieldsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == FieldColumn ? tr("Field") : tr("Value");
}

} // namespace moetune
