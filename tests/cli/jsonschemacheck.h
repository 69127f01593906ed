// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QStringList>

// Checks a JSON value against a JSON Schema (draft 2020-12), for the subset docs/diagnose-json-schema.json
// uses: type, properties, required, additionalProperties, items, anyOf, enum, const, minimum, minItems,
// maxItems, $ref to "#/$defs/...". An unsupported keyword is reported as an error, so the documented schema
// cannot silently outgrow the check.
class JsonSchemaCheck {
public:
    explicit JsonSchemaCheck(QJsonObject schema);
    // Errors as "/findings/0/severity: ..."; empty when the value conforms.
    QStringList validate(const QJsonValue &value) const;

private:
    void check(const QJsonValue &value, const QJsonObject &schema, const QString &path,
               QStringList *errors) const;
    QJsonObject m_root;
};
