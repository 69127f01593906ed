// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "jsonschemacheck.h"

#include <QJsonArray>
#include <QSet>
#include <QVariant>

using namespace Qt::StringLiterals;

namespace {

QString typeOf(const QJsonValue &v) {
    switch (v.type()) {
    case QJsonValue::Null:
        return u"null"_s;
    case QJsonValue::Bool:
        return u"boolean"_s;
    case QJsonValue::Double:
        return v.toDouble() == double(qint64(v.toDouble())) ? u"integer"_s : u"number"_s;
    case QJsonValue::String:
        return u"string"_s;
    case QJsonValue::Array:
        return u"array"_s;
    case QJsonValue::Object:
        return u"object"_s;
    case QJsonValue::Undefined:
        break;
    }
    return u"undefined"_s;
}

bool typeMatches(const QString &actual, const QString &wanted) {
    return actual == wanted || (wanted == u"number"_s && actual == u"integer"_s);
}

} // namespace

JsonSchemaCheck::JsonSchemaCheck(QJsonObject schema)
    : m_root(std::move(schema)) {}

QStringList JsonSchemaCheck::validate(const QJsonValue &value) const {
    QStringList errors;
    check(value, m_root, QString(), &errors);
    return errors;
}

void JsonSchemaCheck::check(const QJsonValue &value, const QJsonObject &schema, const QString &path,
                            QStringList *errors) const {
    static const QSet<QString> annotations{u"$schema"_s,     u"$id"_s,      u"$defs"_s,    u"title"_s,
                                           u"description"_s, u"examples"_s, u"$comment"_s, u"default"_s};
    const QString where = path.isEmpty() ? u"/"_s : path;
    for (auto it = schema.begin(); it != schema.end(); ++it) {
        const QString key = it.key();
        const QJsonValue arg = it.value();
        if (annotations.contains(key) || key == u"properties"_s || key == u"additionalProperties"_s)
            continue;
        if (key == u"$ref"_s) {
            const QString ref = arg.toString();
            if (!ref.startsWith(u"#/$defs/"_s)) {
                *errors += where + u": unsupported $ref "_s + ref;
                continue;
            }
            const QJsonValue target = m_root.value(u"$defs"_s).toObject().value(ref.mid(8));
            if (!target.isObject())
                *errors += where + u": dangling $ref "_s + ref;
            else
                check(value, target.toObject(), path, errors);
        } else if (key == u"type"_s) {
            const QStringList wanted = arg.isArray() ? QVariant(arg.toArray().toVariantList()).toStringList()
                                                     : QStringList{arg.toString()};
            const QString actual = typeOf(value);
            bool ok = false;
            for (const QString &w : wanted)
                ok = ok || typeMatches(actual, w);
            if (!ok)
                *errors += where + u": is "_s + actual + u", schema wants "_s + wanted.join(u" or "_s);
        } else if (key == u"required"_s) {
            if (!value.isObject())
                continue;
            for (const QJsonValue &name : arg.toArray()) {
                if (!value.toObject().contains(name.toString()))
                    *errors += where + u": missing required property \""_s + name.toString() + u'"';
            }
        } else if (key == u"items"_s) {
            const QJsonArray items = value.toArray();
            for (qsizetype i = 0; i < items.size(); ++i)
                check(items.at(i), arg.toObject(), path + u'/' + QString::number(i), errors);
        } else if (key == u"anyOf"_s) {
            bool any = false;
            for (const QJsonValue &alternative : arg.toArray()) {
                QStringList sub;
                check(value, alternative.toObject(), path, &sub);
                any = any || sub.isEmpty();
            }
            if (!any)
                *errors += where + u": matches none of the anyOf alternatives"_s;
        } else if (key == u"enum"_s) {
            if (!arg.toArray().contains(value))
                *errors += where + u": value not in the schema's enum"_s;
        } else if (key == u"const"_s) {
            if (arg != value)
                *errors += where + u": value differs from the schema's const"_s;
        } else if (key == u"minimum"_s) {
            if (value.isDouble() && value.toDouble() < arg.toDouble())
                *errors += where + u": below the minimum "_s + QString::number(arg.toDouble());
        } else if (key == u"minItems"_s) {
            if (value.isArray() && value.toArray().size() < arg.toInt())
                *errors += where + u": fewer than "_s + QString::number(arg.toInt()) + u" items"_s;
        } else if (key == u"maxItems"_s) {
            if (value.isArray() && value.toArray().size() > arg.toInt())
                *errors += where + u": more than "_s + QString::number(arg.toInt()) + u" items"_s;
        } else {
            *errors += where + u": schema keyword \""_s + key + u"\" is not supported by this check"_s;
        }
    }
    if (!value.isObject())
        return;
    const QJsonObject object = value.toObject();
    const QJsonObject properties = schema.value(u"properties"_s).toObject();
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QString child = path + u'/' + it.key();
        if (properties.contains(it.key()))
            check(it.value(), properties.value(it.key()).toObject(), child, errors);
        else if (schema.value(u"additionalProperties"_s) == QJsonValue(false))
            *errors += child + u": property not in the schema"_s;
        else if (schema.value(u"additionalProperties"_s).isObject())
            check(it.value(), schema.value(u"additionalProperties"_s).toObject(), child, errors);
    }
}
