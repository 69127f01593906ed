#include "core/tuning/tuningtarget.h"

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
    QString s = u"E="_s + QString::number(name.experts) + u", N="_s + QString::number(name.n) + u", "_s +
                (name.dtype.isEmpty() ? u"bf16"_s : name.dtype);
    if (name.blockShape)
        s += u", block ["_s + QString::number((*name.blockShape)[0]) + u", "_s +
             QString::number((*name.blockShape)[1]) + u']';
    if (name.perChannelQuant)
        s += u", per-channel"_s;
    return s;
}

QString TuningTarget::installFolder() const {
    return joinPath(configRoot, tritonFolder);
}

QString TuningTarget::upPath() const {
    ConfigName up = name;
    up.down = false;
    const Framework dialect = framework == Framework::VLLM ? Framework::VLLM : Framework::SGLang;
    return joinPath(installFolder(), up.fileName(dialect));
}

QString TuningTarget::downPath() const {
    // Only where the log shows the server reading a _down file: never vLLM, nor SGLang builds that
    // predate down files or whose framework the log does not show.
    if (framework != Framework::SGLang || !(downMissing || downFellBack || downLoaded))
        return QString();
    ConfigName down = name;
    down.down = true;
    return joinPath(installFolder(), down.fileName(Framework::SGLang));
}

bool TuningTarget::sameShape(const TuningTarget &other) const {
    ConfigName a = name;
    ConfigName b = other.name;
    a.down = b.down = false;
    return a == b && framework == other.framework && configRoot == other.configRoot &&
           tritonFolder == other.tritonFolder;
}

QString TuningTarget::shapeKey() const {
    ConfigName up = name;
    up.down = false;
    return frameworkId(framework) + u'\n' + configRoot + u'\n' + tritonFolder + u'\n' +
           up.fileName(Framework::SGLang);
}

bool TuningTarget::tunesDown() const {
    return framework == Framework::SGLang && (downMissing || downFellBack);
}

QJsonObject TuningTarget::toJson() const {
    QJsonObject o;
    o.insert(u"framework"_s, frameworkId(framework));
    o.insert(u"config_root"_s, configRoot);
    o.insert(u"triton_version"_s, tritonVersion ? QJsonValue(tritonVersion->toString()) : QJsonValue());
    o.insert(u"triton_folder"_s, tritonFolder);
    o.insert(u"triton_folder_missing"_s, tritonFolderMissing);
    o.insert(u"no_config_loaded"_s, noConfigLoaded);
    o.insert(u"fallback_folder"_s, fallbackFolder.isEmpty() ? QJsonValue() : QJsonValue(fallbackFolder));
    o.insert(u"E"_s, name.experts);
    o.insert(u"N"_s, name.n);
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
