// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/job/tuningtarget.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString joinPath(const QString &a, const QString &b) {
    if (a.isEmpty())
        return b;
    if (b.isEmpty())
        return a;
    if (a.endsWith(u'/'))
        return a + b;
    return a + u'/' + b;
}

} // namespace

QString TuningTarget::shapeSummary() const {
    if (kernel == Kernel::BlockFp8Gemm) {
        QString s = u"N="_s + QString::number(name.n) + u", K="_s + QString::number(denseK) + u", "_s +
                    (name.dtype.isEmpty() ? u"fp8_w8a8"_s : name.dtype);
        if (name.blockShape)
            s += u", block ["_s + QString::number((*name.blockShape)[0]) + u", "_s +
                 QString::number((*name.blockShape)[1]) + u']';
        return s;
    }
    QString s = u"E="_s + QString::number(name.experts) + u", N="_s + QString::number(name.n) + u", "_s +
                (name.dtype.isEmpty() ? u"bf16"_s : name.dtype);
    if (name.blockShape)
        s += u", block ["_s + QString::number((*name.blockShape)[0]) + u", "_s +
             QString::number((*name.blockShape)[1]) + u']';
    if (name.perChannelQuant)
        s += u", per-channel"_s;
    return s;
}

int TuningTarget::intermediateN() const {
    if (kernel == Kernel::FusedMoe && name.dtype == u"int4_w4a16"_s && framework == Framework::SGLang)
        return name.n * 2; // SGLang names the packed weight's N
    return name.n;
}

int TuningTarget::weightN() const {
    if (kernel == Kernel::FusedMoe && name.dtype == u"int4_w4a16"_s && framework == Framework::VLLM)
        return name.n / 2; // vLLM doubles the packed weight's N back
    return name.n;
}

QStringList TuningTarget::dtypeCandidates() const {
    if (kernel == Kernel::FusedMoe && framework == Framework::VLLM && name.dtype.isEmpty())
        return {u"bf16"_s, u"fp16"_s, u"int8_w8a8"_s};
    if (name.dtype.isEmpty())
        return {u"bf16"_s, u"fp16"_s};
    return {name.dtype};
}

QString TuningTarget::installFolder() const {
    return joinPath(configRoot, tritonFolder);
}

QString TuningTarget::upPath() const {
    if (kernel == Kernel::BlockFp8Gemm) {
        QString file = u"N="_s + QString::number(name.n) + u",K="_s + QString::number(denseK) +
                       u",device_name="_s + name.deviceName + u",dtype="_s +
                       (name.dtype.isEmpty() ? u"fp8_w8a8"_s : name.dtype);
        if (name.blockShape)
            file += u",block_shape=["_s + QString::number((*name.blockShape)[0]) + u", "_s +
                    QString::number((*name.blockShape)[1]) + u']';
        return joinPath(installFolder(), file + u".json"_s);
    }
    ConfigName up = name;
    up.down = false;
    const Framework dialect = framework == Framework::VLLM ? Framework::VLLM : Framework::SGLang;
    return joinPath(installFolder(), up.fileName(dialect));
}

QString TuningTarget::downPath() const {
    // Only where the log shows the server reading a _down file: never vLLM, nor SGLang builds that
    // predate down files or whose framework the log does not show.
    if (kernel != Kernel::FusedMoe || framework != Framework::SGLang ||
        !(downMissing || downFellBack || downLoaded))
        return QString();
    ConfigName down = name;
    down.down = true;
    return joinPath(installFolder(), down.fileName(Framework::SGLang));
}

bool TuningTarget::sameShape(const TuningTarget &other) const {
    // The shape is ConfigName's one sameShape(); a target also has a place (root, Triton folder).
    return name.sameShape(other.name) && kernel == other.kernel && denseK == other.denseK &&
           framework == other.framework && configRoot == other.configRoot &&
           tritonFolder == other.tritonFolder;
}

QString TuningTarget::shapeKey() const {
    ConfigName up = name;
    up.down = false;
    return frameworkId(framework) + u'\n' + configRoot + u'\n' + tritonFolder + u'\n' +
           (kernel == Kernel::BlockFp8Gemm ? upPath() : up.fileName(Framework::SGLang));
}

bool TuningTarget::tunesDown() const {
    return kernel == Kernel::FusedMoe && framework == Framework::SGLang && (downMissing || downFellBack);
}

QJsonObject TuningTarget::toJson() const {
    QJsonObject o;
    o.insert(u"kernel"_s, kernel == Kernel::BlockFp8Gemm ? u"w8a8_block_fp8_gemm"_s : u"fused_moe"_s);
    o.insert(u"framework"_s, frameworkId(framework));
    o.insert(u"config_root"_s, configRoot);
    o.insert(u"triton_version"_s, tritonVersion ? QJsonValue(tritonVersion->toString()) : QJsonValue());
    o.insert(u"triton_folder"_s, tritonFolder);
    o.insert(u"triton_folder_missing"_s, tritonFolderMissing);
    o.insert(u"no_config_loaded"_s, noConfigLoaded);
    o.insert(u"fallback_folder"_s, fallbackFolder.isEmpty() ? QJsonValue() : QJsonValue(fallbackFolder));
    o.insert(u"E"_s, kernel == Kernel::BlockFp8Gemm ? QJsonValue() : QJsonValue(name.experts));
    o.insert(u"N"_s, name.n);
    o.insert(u"N_intermediate"_s, intermediateN());
    o.insert(u"N_weight"_s, weightN());
    o.insert(u"K"_s, kernel == Kernel::BlockFp8Gemm ? QJsonValue(denseK) : QJsonValue());
    o.insert(u"dtype_candidates"_s, QJsonArray::fromStringList(dtypeCandidates()));
    o.insert(u"device_name"_s, name.deviceName);
    o.insert(u"dtype"_s, name.dtype.isEmpty() ? QJsonValue() : QJsonValue(name.dtype));
    o.insert(u"block_shape"_s, name.blockShape
                                   ? QJsonValue(QJsonArray{(*name.blockShape)[0], (*name.blockShape)[1]})
                                   : QJsonValue());
    o.insert(u"per_channel_quant"_s, name.perChannelQuant);
    o.insert(u"up_missing"_s, upMissing);
    o.insert(u"down_missing"_s, downMissing);
    o.insert(u"up_fell_back"_s, upFellBack);
    o.insert(u"down_fell_back"_s, downFellBack);
    o.insert(u"up_loaded"_s, upLoaded);
    o.insert(u"down_loaded"_s, downLoaded);
    o.insert(u"shape"_s, shapeSummary());
    o.insert(u"up_path"_s, upPath());
    o.insert(u"down_path"_s, downPath().isEmpty() ? QJsonValue() : QJsonValue(downPath()));
    o.insert(u"install_folder"_s, installFolder());
    return o;
}

} // namespace moetune
