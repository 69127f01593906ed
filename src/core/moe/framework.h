// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringView>

namespace moetune {

// The inference server whose config files and logs we deal with.
enum class Framework { Unknown, SGLang, VLLM };

// "SGLang", "vLLM" or "unknown" (for people).
QString frameworkName(Framework framework);
// "sglang", "vllm", "unknown" (for JSON and command lines).
QString frameworkId(Framework framework);
// Accepts the id or the name, case-insensitive; Unknown for anything else.
Framework frameworkFromString(QStringView text);

} // namespace moetune
