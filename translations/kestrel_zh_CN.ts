<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>BranchSwitcher</name>
        <message>
            <location filename="../ui/BranchSwitcher.qml" line="12" />
            <source>Version %1 of %2</source>
            <translation>第 %1 版，共 %2 版</translation>
        </message>
        <message>
            <location filename="../ui/BranchSwitcher.qml" line="17" />
            <source>Previous version</source>
            <translation>上一版</translation>
        </message>
        <message>
            <location filename="../ui/BranchSwitcher.qml" line="22" />
            <source>%1/%2</source>
            <translation>%1/%2</translation>
        </message>
        <message>
            <location filename="../ui/BranchSwitcher.qml" line="29" />
            <source>Next version</source>
            <translation>下一版</translation>
        </message>
    </context>
    <context>
        <name>ChatView</name>
        <message>
            <location filename="../ui/ChatView.qml" line="39" />
            <source>Export conversation (Ctrl+E)</source>
            <translation>导出对话 (Ctrl+E)</translation>
        </message>
        <message>
            <location filename="../ui/ChatView.qml" line="59" />
            <source>Messages</source>
            <translation>消息</translation>
        </message>
    </context>
    <context>
        <name>CodeBlock</name>
        <message>
            <location filename="../ui/CodeBlock.qml" line="29" />
            <source>code</source>
            <translation>代码</translation>
        </message>
        <message>
            <location filename="../ui/CodeBlock.qml" line="37" />
            <source>Copied</source>
            <translation>已复制</translation>
        </message>
        <message>
            <location filename="../ui/CodeBlock.qml" line="37" />
            <source>Copy code</source>
            <translation>复制代码</translation>
        </message>
        <message>
            <location filename="../ui/CodeBlock.qml" line="65" />
            <source>Code</source>
            <translation>代码</translation>
        </message>
    </context>
    <context>
        <name>Composer</name>
        <message>
            <location filename="../ui/Composer.qml" line="35" />
            <source>Message Kestrel…</source>
            <translation>给 Kestrel 发消息…</translation>
        </message>
        <message>
            <location filename="../ui/Composer.qml" line="45" />
            <source>Message</source>
            <translation>消息</translation>
        </message>
        <message>
            <location filename="../ui/Composer.qml" line="68" />
            <source>Stop (Esc)</source>
            <translation>停止 (Esc)</translation>
        </message>
        <message>
            <location filename="../ui/Composer.qml" line="68" />
            <source>Send (Enter)</source>
            <translation>发送 (Enter)</translation>
        </message>
        <message>
            <location filename="../ui/Composer.qml" line="85" />
            <source>Enter sends · Shift+Enter adds a line · Esc stops</source>
            <translation>Enter 发送 · Shift+Enter 换行 · Esc 停止</translation>
        </message>
    </context>
    <context>
        <name>ConversationSettings</name>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="26" />
            <source>Conversation</source>
            <translation>对话</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="29" />
            <location filename="../ui/ConversationSettings.qml" line="34" />
            <source>System prompt</source>
            <translation>系统提示词</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="33" />
            <source>You are a helpful assistant.</source>
            <translation>你是一个乐于助人的助手。</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="40" />
            <location filename="../ui/ConversationSettings.qml" line="47" />
            <source>Chat template override</source>
            <translation>自定义聊天模板</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="41" />
            <source>Empty: the template in the model file (when the file has none, the built-in format its vocabulary fits: Gemma, Llama 3 or ChatML).</source>
            <translation>留空：使用模型文件中的模板（文件中没有时，使用与其词表相符的内置格式：Gemma、Llama 3 或 ChatML）。</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="52" />
            <source>Appearance</source>
            <translation>外观</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="58" />
            <source>Language</source>
            <translation>语言</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="61" />
            <source>System default</source>
            <translation>跟随系统</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="68" />
            <source>Theme</source>
            <translation>主题</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="71" />
            <source>Follow the system</source>
            <translation>跟随系统</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="72" />
            <source>Light</source>
            <translation>浅色</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="73" />
            <source>Dark</source>
            <translation>深色</translation>
        </message>
    </context>
    <context>
        <name>EmptyState</name>
        <message>
            <location filename="../ui/EmptyState.qml" line="17" />
            <source>How can I help?</source>
            <translation>有什么可以帮你？</translation>
        </message>
        <message>
            <location filename="../ui/EmptyState.qml" line="29" />
            <source>%1 runs on this computer. Nothing you type leaves it.</source>
            <translation>%1 在这台电脑上运行，你输入的内容不会离开它。</translation>
        </message>
        <message>
            <location filename="../ui/EmptyState.qml" line="30" />
            <source>Loading the model…</source>
            <translation>正在加载模型…</translation>
        </message>
        <message>
            <location filename="../ui/EmptyState.qml" line="31" />
            <source>Choose a model in Settings (Ctrl+,) to start.</source>
            <translation>请在设置 (Ctrl+,) 中选择一个模型以开始。</translation>
        </message>
    </context>
    <context>
        <name>ErrorToast</name>
        <message>
            <location filename="../ui/ErrorToast.qml" line="37" />
            <source>Dismiss</source>
            <translation>关闭</translation>
        </message>
    </context>
    <context>
        <name>ExportDialog</name>
        <message>
            <location filename="../ui/ExportDialog.qml" line="21" />
            <source>Export</source>
            <translation>导出</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="49" />
            <source>Format</source>
            <translation>格式</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="50" />
            <source>Markdown (.md)</source>
            <translation>Markdown (.md)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="51" />
            <source>JSON, lossless and re-importable (.json)</source>
            <translation>JSON，无损且可重新导入 (.json)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="52" />
            <source>Web page (.html)</source>
            <translation>网页 (.html)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="53" />
            <source>Plain text (.txt)</source>
            <translation>纯文本 (.txt)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="54" />
            <source>What</source>
            <translation>范围</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="57" />
            <source>All conversations</source>
            <translation>所有对话</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="80" />
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="84" />
            <source>Export…</source>
            <translation>导出…</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="93" />
            <source>Export to</source>
            <translation>导出到</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="96" />
            <source>Markdown (*.md)</source>
            <translation>Markdown (*.md)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="97" />
            <source>JSON (*.json)</source>
            <translation>JSON (*.json)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="98" />
            <source>Web page (*.html)</source>
            <translation>网页 (*.html)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="98" />
            <source>Text (*.txt)</source>
            <translation>文本 (*.txt)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="106" />
            <source>Import conversations</source>
            <translation>导入对话</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="107" />
            <source>Kestrel JSON export (*.json)</source>
            <translation>Kestrel JSON 导出文件 (*.json)</translation>
        </message>
    </context>
    <context>
        <name>LoadBanner</name>
        <message>
            <location filename="../ui/LoadBanner.qml" line="17" />
            <source>Loading %1…</source>
            <translation>正在加载 %1…</translation>
        </message>
        <message>
            <location filename="../ui/LoadBanner.qml" line="27" />
            <source>Loading progress</source>
            <translation>加载进度</translation>
        </message>
        <message>
            <location filename="../ui/LoadBanner.qml" line="39" />
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
    </context>
    <context>
        <name>Main</name>
        <message>
            <location filename="../ui/Main.qml" line="15" />
            <source>%1 — Kestrel</source>
            <translation>%1 — Kestrel</translation>
        </message>
        <message>
            <location filename="../ui/Main.qml" line="15" />
            <source>Kestrel</source>
            <translation>Kestrel</translation>
        </message>
    </context>
    <context>
        <name>MessageBubble</name>
        <message>
            <location filename="../ui/MessageBubble.qml" line="32" />
            <source>You</source>
            <translation>你</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="32" />
            <source>Assistant</source>
            <translation>助手</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="118" />
            <source>The reply failed: %1</source>
            <translation>回复失败：%1</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="58" />
            <location filename="../ui/MessageBubble.qml" line="135" />
            <source>Copy</source>
            <translation>复制</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="65" />
            <location filename="../ui/MessageBubble.qml" line="142" />
            <source>Edit</source>
            <translation>编辑</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="150" />
            <source>Regenerate</source>
            <translation>重新生成</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="159" />
            <source>Continue</source>
            <translation>继续</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="166" />
            <source>stopped</source>
            <translation>已停止</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="167" />
            <source>edited</source>
            <translation>已编辑</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="168" />
            <source>the conversation filled the model's context</source>
            <translation>对话已占满模型的上下文</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="169" />
            <source>cut at the reply length limit</source>
            <translation>已达回复长度上限，已截断</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="176" />
            <source>%1 tok/s</source>
            <translation>%1 词元/秒</translation>
        </message>
    </context>
    <context>
        <name>MessageEditor</name>
        <message>
            <location filename="../ui/MessageEditor.qml" line="34" />
            <source>Edit message</source>
            <translation>编辑消息</translation>
        </message>
        <message>
            <location filename="../ui/MessageEditor.qml" line="44" />
            <source>The original stays as another branch.</source>
            <translation>原消息会作为另一个分支保留。</translation>
        </message>
        <message>
            <location filename="../ui/MessageEditor.qml" line="49" />
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <location filename="../ui/MessageEditor.qml" line="51" />
            <source>Send</source>
            <translation>发送</translation>
        </message>
        <message>
            <location filename="../ui/MessageEditor.qml" line="51" />
            <source>Save</source>
            <translation>保存</translation>
        </message>
    </context>
    <context>
        <name>ModelChip</name>
        <message>
            <location filename="../ui/ModelChip.qml" line="12" />
            <source>Model: %1</source>
            <translation>模型：%1</translation>
        </message>
        <message>
            <location filename="../ui/ModelChip.qml" line="36" />
            <source>No model</source>
            <translation>无模型</translation>
        </message>
        <message>
            <location filename="../ui/ModelChip.qml" line="37" />
            <source>Model</source>
            <translation>模型</translation>
        </message>
    </context>
    <context>
        <name>ModelInfoCard</name>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="36" />
            <source>Name</source>
            <translation>名称</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="38" />
            <source>File size</source>
            <translation>文件大小</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="40" />
            <source>Architecture</source>
            <translation>架构</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="42" />
            <source>Quantization</source>
            <translation>量化</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="44" />
            <source>Trained context</source>
            <translation>训练上下文</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="45" />
            <source>%1 tokens</source>
            <translation>%1 个词元</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="46" />
            <source>KV cache</source>
            <translation>KV 缓存</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="49" />
            <source>8-bit</source>
            <translation>8 位</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="49" />
            <source>16-bit</source>
            <translation>16 位</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="51" />
            <source>Memory</source>
            <translation>内存</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="54" />
            <source>%1 (%2 tokens)</source>
            <translation>%1（%2 个词元）</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="56" />
            <source>Draft model</source>
            <translation>草稿模型</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="79" />
            <source>Chat template: %1</source>
            <translation>聊天模板：%1</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="88" />
            <source>Architecture, quantization, trained context and memory appear once the model is loaded (Apply).</source>
            <translation>模型加载后（点击“应用”）将显示架构、量化方式、训练上下文和内存占用。</translation>
        </message>
    </context>
    <context>
        <name>ModelSettings</name>
        <message>
            <location filename="../ui/ModelSettings.qml" line="11" />
            <source>Model</source>
            <translation>模型</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="15" />
            <source>Model file</source>
            <translation>模型文件</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="24" />
            <source>/path/to/model.gguf</source>
            <translation>/路径/到/模型.gguf</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="29" />
            <location filename="../ui/ModelSettings.qml" line="51" />
            <source>Browse…</source>
            <translation>浏览…</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="38" />
            <source>Draft model (optional)</source>
            <translation>草稿模型（可选）</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="39" />
            <source>A small model with the same vocabulary (one of the same family) that guesses tokens for the model to check, when speculative decoding is set to use it.</source>
            <translation>与主模型词表相同的小模型（同一系列），在推测解码设为使用它时，先猜出若干词元再交由主模型核验。</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="46" />
            <source>None</source>
            <translation>无</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="63" />
            <source>Device</source>
            <translation>设备</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="67" />
            <source>CPU</source>
            <translation>CPU</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="68" />
            <source>One CUDA GPU</source>
            <translation>单个 CUDA GPU</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="69" />
            <source>Split across GPUs</source>
            <translation>拆分到多个 GPU</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="75" />
            <source>Context length</source>
            <translation>上下文长度</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="76" />
            <source>Tokens; 0 uses the trained context (at most 4096).</source>
            <translation>以词元计；0 表示使用训练上下文（最多 4096）。</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="88" />
            <source>KV cache</source>
            <translation>KV 缓存</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="89" />
            <source>8-bit holds 1.8x the context in the same memory and speeds up long chats on the CPU, a little less exactly. CPU only: GPUs keep 16-bit.</source>
            <translation>8 位在同样的内存中可容纳 1.8 倍的上下文，并让 CPU 上的长对话更快，精度略低。仅限 CPU：GPU 仍使用 16 位。</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="94" />
            <source>16-bit (exact to 1/2048)</source>
            <translation>16 位（精确到 1/2048）</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="95" />
            <source>8-bit</source>
            <translation>8 位</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="101" />
            <source>Speculative decoding</source>
            <translation>推测解码</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="102" />
            <source>Guesses the next words and checks them in one step: the same replies, in fewer steps. From the conversation: earlier text (code, rewrites, lists). With the draft model: the model above. CPU only for now.</source>
            <translation>先猜出接下来的词，再一步核验：回复不变，步数更少。取自对话：依据前文（代码、改写、列表）。使用草稿模型：依据上方的草稿模型。目前仅限 CPU。</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="107" />
            <source>From the conversation</source>
            <translation>取自对话</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="108" />
            <source>With the draft model</source>
            <translation>使用草稿模型</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="109" />
            <source>Off</source>
            <translation>关闭</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="117" />
            <source>Choose a model file</source>
            <translation>选择模型文件</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="118" />
            <source>GGUF models (*.gguf)</source>
            <translation>GGUF 模型 (*.gguf)</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="118" />
            <source>All files (*)</source>
            <translation>所有文件 (*)</translation>
        </message>
    </context>
    <context>
        <name>ReasoningFold</name>
        <message>
            <location filename="../ui/ReasoningFold.qml" line="34" />
            <source>Thinking…</source>
            <translation>思考中…</translation>
        </message>
        <message>
            <location filename="../ui/ReasoningFold.qml" line="34" />
            <source>Reasoning</source>
            <translation>推理过程</translation>
        </message>
    </context>
    <context>
        <name>SamplingSettings</name>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="8" />
            <source>Sampling</source>
            <translation>采样</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="16" />
            <source>Temperature</source>
            <translation>温度</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="17" />
            <source>0 always picks the likeliest token.</source>
            <translation>0 表示总是选择概率最高的词元。</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="22" />
            <source>Max tokens</source>
            <translation>最大词元数</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="23" />
            <source>-1: until the context is full.</source>
            <translation>-1：直到上下文用满。</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="28" />
            <source>Top-k</source>
            <translation>Top-k</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="33" />
            <source>Top-p</source>
            <translation>Top-p</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="38" />
            <source>Min-p</source>
            <translation>Min-p</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="43" />
            <source>Repeat penalty</source>
            <translation>重复惩罚</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="48" />
            <source>Seed</source>
            <translation>随机种子</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="49" />
            <source>0: a new random seed for every reply.</source>
            <translation>0：每次回复使用新的随机种子。</translation>
        </message>
    </context>
    <context>
        <name>SettingsDialog</name>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="26" />
            <source>Settings</source>
            <translation>设置</translation>
        </message>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="58" />
            <source>Close</source>
            <translation>关闭</translation>
        </message>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="122" />
            <source>Fix the fields marked in red to apply.</source>
            <translation>请先修正标红的字段再应用。</translation>
        </message>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="129" />
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="134" />
            <source>Apply</source>
            <translation>应用</translation>
        </message>
    </context>
    <context>
        <name>Sidebar</name>
        <message>
            <location filename="../ui/Sidebar.qml" line="34" />
            <source>Kestrel</source>
            <translation>Kestrel</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="42" />
            <source>New chat (Ctrl+N)</source>
            <translation>新对话 (Ctrl+N)</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="51" />
            <source>Search conversations (Ctrl+F)</source>
            <translation>搜索对话 (Ctrl+F)</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="78" />
            <source>Conversations</source>
            <translation>对话</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="100" />
            <source>No conversation mentions “%1”.</source>
            <translation>没有对话提到“%1”。</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="101" />
            <source>Your conversations appear here.</source>
            <translation>你的对话会显示在这里。</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="110" />
            <source>Settings (Ctrl+,)</source>
            <translation>设置 (Ctrl+,)</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="115" />
            <source>Import conversations…</source>
            <translation>导入对话…</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="120" />
            <source>1 chat</source>
            <translation>1 个对话</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="120" />
            <source>%1 chats</source>
            <translation>%1 个对话</translation>
        </message>
    </context>
    <context>
        <name>SidebarItem</name>
        <message>
            <location filename="../ui/SidebarItem.qml" line="71" />
            <source>Conversation title</source>
            <translation>对话标题</translation>
        </message>
        <message>
            <location filename="../ui/SidebarItem.qml" line="87" />
            <source>Rename</source>
            <translation>重命名</translation>
        </message>
        <message>
            <location filename="../ui/SidebarItem.qml" line="94" />
            <source>Delete</source>
            <translation>删除</translation>
        </message>
    </context>
    <context>
        <name>StatusBar</name>
        <message>
            <location filename="../ui/StatusBar.qml" line="19" />
            <source>Generating… Esc stops</source>
            <translation>生成中… 按 Esc 停止</translation>
        </message>
        <message>
            <location filename="../ui/StatusBar.qml" line="25" />
            <source>%1 tok/s</source>
            <translation>%1 词元/秒</translation>
        </message>
        <message>
            <location filename="../ui/StatusBar.qml" line="46" />
            <source>context %1 / %2</source>
            <translation>上下文 %1 / %2</translation>
        </message>
    </context>
    <context>
        <name>UndoBar</name>
        <message>
            <location filename="../ui/UndoBar.qml" line="21" />
            <source>Deleted “%1”</source>
            <translation>已删除“%1”</translation>
        </message>
        <message>
            <location filename="../ui/UndoBar.qml" line="27" />
            <source>Undo</source>
            <translation>撤销</translation>
        </message>
    </context>
    <context>
        <name>kestrel::desktop::ChatController</name>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="30" />
            <location filename="../app/desktop/chat_controller.cpp" line="99" />
            <source>New chat</source>
            <translation>新对话</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="112" />
            <source>No model file was found at %1. Choose a .gguf model to start chatting.</source>
            <translation>在 %1 没有找到模型文件。请选择一个 .gguf 模型开始聊天。</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="157" />
            <location filename="../app/desktop/chat_controller.cpp" line="158" />
            <source>The model could not be loaded: %1</source>
            <translation>无法加载模型：%1</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="199" />
            <source>The model is still loading; wait a moment.</source>
            <translation>模型仍在加载，请稍候。</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="200" />
            <source>No model is loaded. Open Settings (Ctrl+,) to choose one.</source>
            <translation>尚未加载模型。请打开设置 (Ctrl+,) 选择一个。</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="498" />
            <source>Unknown export format "%1".</source>
            <translation>未知的导出格式“%1”。</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="502" />
            <source>Open a conversation to export, or export all of them.</source>
            <translation>请打开一个要导出的对话，或导出所有对话。</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="533" />
            <source>Kestrel conversations</source>
            <translation>Kestrel 对话</translation>
        </message>
    </context>
    <context>
        <name>kestrel::desktop::EngineWorker</name>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="108" />
            <source>The draft model could not be loaded: %1</source>
            <translation>无法加载草稿模型：%1</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="110" />
            <source>The draft model is not used: %1</source>
            <translation>未使用草稿模型：%1</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="114" />
            <source>The draft model could not be opened: %1</source>
            <translation>无法打开草稿模型：%1</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="169" />
            <source>The draft model is not used on a GPU yet: there its guesses cost more time than they save.</source>
            <translation>在 GPU 上暂不使用草稿模型：在那里它的猜测耗费的时间多于节省的时间。</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="192" />
            <source>No model is loaded. Open Settings (Ctrl+,) and choose a .gguf model file.</source>
            <translation>尚未加载模型。请打开设置 (Ctrl+,) 并选择一个 .gguf 模型文件。</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="209" />
            <source>The chat template failed: %1</source>
            <translation>聊天模板出错：%1</translation>
        </message>
    </context>
    <context>
        <name>kestrel::desktop::SettingsModel</name>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="126" />
            <source>Choose a model file (.gguf).</source>
            <translation>请选择一个模型文件 (.gguf)。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="128" />
            <source>%1 does not exist or is not a file.</source>
            <translation>%1 不存在或不是文件。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="130" />
            <source>%1 cannot be read; check its permissions.</source>
            <translation>无法读取 %1，请检查其权限。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="132" />
            <source>Kestrel reads GGUF models; this file does not end in .gguf.</source>
            <translation>Kestrel 读取 GGUF 模型；此文件的扩展名不是 .gguf。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="134" />
            <source>The draft model %1 does not exist.</source>
            <translation>草稿模型 %1 不存在。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="136" />
            <source>Choose CPU, one CUDA GPU or several GPUs.</source>
            <translation>请选择 CPU、单个 CUDA GPU 或多个 GPU。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="138" />
            <source>Choose 16-bit or 8-bit.</source>
            <translation>请选择 16 位或 8 位。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="141" />
            <source>Choose from the conversation, with the draft model, or off.</source>
            <translation>请选择“取自对话”、“使用草稿模型”或“关闭”。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="143" />
            <source>Choose a draft model above first.</source>
            <translation>请先在上方选择草稿模型。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="146" />
            <source>Use 0 for the model's default, or a positive number of tokens.</source>
            <translation>填 0 使用模型默认值，或填一个正的词元数。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="148" />
            <source>At least 256 tokens are needed for a conversation.</source>
            <translation>对话至少需要 256 个词元。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="151" />
            <source>The model was trained on %1 tokens; a longer context produces garbage. Use %1 or less.</source>
            <translation>该模型的训练上下文为 %1 个词元；更长的上下文会产生乱码。请使用 %1 或更小的值。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="153" />
            <source>Between 0 (always the likeliest token) and 5.</source>
            <translation>介于 0（总是选择概率最高的词元）和 5 之间。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="154" />
            <source>0 turns top-k off; otherwise up to 100000.</source>
            <translation>0 表示关闭 top-k；否则最大为 100000。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="155" />
            <source>Above 0 and at most 1 (1 turns top-p off).</source>
            <translation>大于 0 且不超过 1（1 表示关闭 top-p）。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="156" />
            <source>At least 0 (off) and below 1.</source>
            <translation>不小于 0（关闭）且小于 1。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="158" />
            <source>Between 0.5 and 3; 1 turns the penalty off.</source>
            <translation>介于 0.5 和 3 之间；1 表示关闭惩罚。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="161" />
            <source>A whole number from 0 (a new random seed each reply) up to 2^64-1.</source>
            <translation>0（每次回复使用新的随机种子）到 2^64-1 之间的整数。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="163" />
            <source>A positive number of tokens, or -1 for no limit but the context.</source>
            <translation>正的词元数，或填 -1 表示仅受上下文限制。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="165" />
            <source>A reply cannot be longer than the context (%1 tokens).</source>
            <translation>回复不能超过上下文长度（%1 个词元）。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="169" />
            <source>This does not look like a Jinja chat template ({{ ... }} / {% ... %}).</source>
            <translation>这看起来不像 Jinja 聊天模板（{{ ... }} / {% ... %}）。</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="171" />
            <source>Unknown language.</source>
            <translation>未知语言。</translation>
        </message>
    </context>
</TS>
