<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
    <context>
        <name>BranchSwitcher</name>
        <message>
            <location filename="../ui/BranchSwitcher.qml" line="12" />
            <source>Version %1 of %2</source>
            <translation>Version %1 of %2</translation>
        </message>
        <message>
            <location filename="../ui/BranchSwitcher.qml" line="17" />
            <source>Previous version</source>
            <translation>Previous version</translation>
        </message>
        <message>
            <location filename="../ui/BranchSwitcher.qml" line="22" />
            <source>%1/%2</source>
            <translation>%1/%2</translation>
        </message>
        <message>
            <location filename="../ui/BranchSwitcher.qml" line="29" />
            <source>Next version</source>
            <translation>Next version</translation>
        </message>
    </context>
    <context>
        <name>ChatView</name>
        <message>
            <location filename="../ui/ChatView.qml" line="39" />
            <source>Export conversation (Ctrl+E)</source>
            <translation>Export conversation (Ctrl+E)</translation>
        </message>
        <message>
            <location filename="../ui/ChatView.qml" line="59" />
            <source>Messages</source>
            <translation>Messages</translation>
        </message>
    </context>
    <context>
        <name>CodeBlock</name>
        <message>
            <location filename="../ui/CodeBlock.qml" line="29" />
            <source>code</source>
            <translation>code</translation>
        </message>
        <message>
            <location filename="../ui/CodeBlock.qml" line="37" />
            <source>Copied</source>
            <translation>Copied</translation>
        </message>
        <message>
            <location filename="../ui/CodeBlock.qml" line="37" />
            <source>Copy code</source>
            <translation>Copy code</translation>
        </message>
        <message>
            <location filename="../ui/CodeBlock.qml" line="65" />
            <source>Code</source>
            <translation>Code</translation>
        </message>
    </context>
    <context>
        <name>Composer</name>
        <message>
            <location filename="../ui/Composer.qml" line="35" />
            <source>Message Kestrel…</source>
            <translation>Message Kestrel…</translation>
        </message>
        <message>
            <location filename="../ui/Composer.qml" line="45" />
            <source>Message</source>
            <translation>Message</translation>
        </message>
        <message>
            <location filename="../ui/Composer.qml" line="68" />
            <source>Stop (Esc)</source>
            <translation>Stop (Esc)</translation>
        </message>
        <message>
            <location filename="../ui/Composer.qml" line="68" />
            <source>Send (Enter)</source>
            <translation>Send (Enter)</translation>
        </message>
        <message>
            <location filename="../ui/Composer.qml" line="85" />
            <source>Enter sends · Shift+Enter adds a line · Esc stops</source>
            <translation>Enter sends · Shift+Enter adds a line · Esc stops</translation>
        </message>
    </context>
    <context>
        <name>ConversationSettings</name>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="26" />
            <source>Conversation</source>
            <translation>Conversation</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="29" />
            <location filename="../ui/ConversationSettings.qml" line="34" />
            <source>System prompt</source>
            <translation>System prompt</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="33" />
            <source>You are a helpful assistant.</source>
            <translation>You are a helpful assistant.</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="40" />
            <location filename="../ui/ConversationSettings.qml" line="47" />
            <source>Chat template override</source>
            <translation>Chat template override</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="41" />
            <source>Empty: the template in the model file (when the file has none, the built-in format its vocabulary fits: Gemma, Llama 3 or ChatML).</source>
            <translation>Empty: the template in the model file (when the file has none, the built-in format its vocabulary fits: Gemma, Llama 3 or ChatML).</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="52" />
            <source>Appearance</source>
            <translation>Appearance</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="58" />
            <source>Language</source>
            <translation>Language</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="61" />
            <source>System default</source>
            <translation>System default</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="68" />
            <source>Theme</source>
            <translation>Theme</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="71" />
            <source>Follow the system</source>
            <translation>Follow the system</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="72" />
            <source>Light</source>
            <translation>Light</translation>
        </message>
        <message>
            <location filename="../ui/ConversationSettings.qml" line="73" />
            <source>Dark</source>
            <translation>Dark</translation>
        </message>
    </context>
    <context>
        <name>EmptyState</name>
        <message>
            <location filename="../ui/EmptyState.qml" line="17" />
            <source>How can I help?</source>
            <translation>How can I help?</translation>
        </message>
        <message>
            <location filename="../ui/EmptyState.qml" line="29" />
            <source>%1 runs on this computer. Nothing you type leaves it.</source>
            <translation>%1 runs on this computer. Nothing you type leaves it.</translation>
        </message>
        <message>
            <location filename="../ui/EmptyState.qml" line="30" />
            <source>Loading the model…</source>
            <translation>Loading the model…</translation>
        </message>
        <message>
            <location filename="../ui/EmptyState.qml" line="31" />
            <source>Choose a model in Settings (Ctrl+,) to start.</source>
            <translation>Choose a model in Settings (Ctrl+,) to start.</translation>
        </message>
    </context>
    <context>
        <name>ErrorToast</name>
        <message>
            <location filename="../ui/ErrorToast.qml" line="37" />
            <source>Dismiss</source>
            <translation>Dismiss</translation>
        </message>
    </context>
    <context>
        <name>ExportDialog</name>
        <message>
            <location filename="../ui/ExportDialog.qml" line="21" />
            <source>Export</source>
            <translation>Export</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="49" />
            <source>Format</source>
            <translation>Format</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="50" />
            <source>Markdown (.md)</source>
            <translation>Markdown (.md)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="51" />
            <source>JSON, lossless and re-importable (.json)</source>
            <translation>JSON, lossless and re-importable (.json)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="52" />
            <source>Web page (.html)</source>
            <translation>Web page (.html)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="53" />
            <source>Plain text (.txt)</source>
            <translation>Plain text (.txt)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="54" />
            <source>What</source>
            <translation>What</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="57" />
            <source>All conversations</source>
            <translation>All conversations</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="80" />
            <source>Cancel</source>
            <translation>Cancel</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="84" />
            <source>Export…</source>
            <translation>Export…</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="93" />
            <source>Export to</source>
            <translation>Export to</translation>
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
            <translation>Web page (*.html)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="98" />
            <source>Text (*.txt)</source>
            <translation>Text (*.txt)</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="106" />
            <source>Import conversations</source>
            <translation>Import conversations</translation>
        </message>
        <message>
            <location filename="../ui/ExportDialog.qml" line="107" />
            <source>Kestrel JSON export (*.json)</source>
            <translation>Kestrel JSON export (*.json)</translation>
        </message>
    </context>
    <context>
        <name>LoadBanner</name>
        <message>
            <location filename="../ui/LoadBanner.qml" line="17" />
            <source>Loading %1…</source>
            <translation>Loading %1…</translation>
        </message>
        <message>
            <location filename="../ui/LoadBanner.qml" line="27" />
            <source>Loading progress</source>
            <translation>Loading progress</translation>
        </message>
        <message>
            <location filename="../ui/LoadBanner.qml" line="39" />
            <source>Cancel</source>
            <translation>Cancel</translation>
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
            <translation>You</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="32" />
            <source>Assistant</source>
            <translation>Assistant</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="118" />
            <source>The reply failed: %1</source>
            <translation>The reply failed: %1</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="58" />
            <location filename="../ui/MessageBubble.qml" line="135" />
            <source>Copy</source>
            <translation>Copy</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="65" />
            <location filename="../ui/MessageBubble.qml" line="142" />
            <source>Edit</source>
            <translation>Edit</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="150" />
            <source>Regenerate</source>
            <translation>Regenerate</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="159" />
            <source>Continue</source>
            <translation>Continue</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="166" />
            <source>stopped</source>
            <translation>stopped</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="167" />
            <source>edited</source>
            <translation>edited</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="168" />
            <source>the conversation filled the model's context</source>
            <translation>the conversation filled the model's context</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="169" />
            <source>cut at the reply length limit</source>
            <translation>cut at the reply length limit</translation>
        </message>
        <message>
            <location filename="../ui/MessageBubble.qml" line="176" />
            <source>%1 tok/s</source>
            <translation>%1 tok/s</translation>
        </message>
    </context>
    <context>
        <name>MessageEditor</name>
        <message>
            <location filename="../ui/MessageEditor.qml" line="34" />
            <source>Edit message</source>
            <translation>Edit message</translation>
        </message>
        <message>
            <location filename="../ui/MessageEditor.qml" line="44" />
            <source>The original stays as another branch.</source>
            <translation>The original stays as another branch.</translation>
        </message>
        <message>
            <location filename="../ui/MessageEditor.qml" line="49" />
            <source>Cancel</source>
            <translation>Cancel</translation>
        </message>
        <message>
            <location filename="../ui/MessageEditor.qml" line="51" />
            <source>Send</source>
            <translation>Send</translation>
        </message>
        <message>
            <location filename="../ui/MessageEditor.qml" line="51" />
            <source>Save</source>
            <translation>Save</translation>
        </message>
    </context>
    <context>
        <name>ModelChip</name>
        <message>
            <location filename="../ui/ModelChip.qml" line="12" />
            <source>Model: %1</source>
            <translation>Model: %1</translation>
        </message>
        <message>
            <location filename="../ui/ModelChip.qml" line="36" />
            <source>No model</source>
            <translation>No model</translation>
        </message>
        <message>
            <location filename="../ui/ModelChip.qml" line="37" />
            <source>Model</source>
            <translation>Model</translation>
        </message>
    </context>
    <context>
        <name>ModelInfoCard</name>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="36" />
            <source>Name</source>
            <translation>Name</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="38" />
            <source>File size</source>
            <translation>File size</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="40" />
            <source>Architecture</source>
            <translation>Architecture</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="42" />
            <source>Quantization</source>
            <translation>Quantization</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="44" />
            <source>Trained context</source>
            <translation>Trained context</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="45" />
            <source>%1 tokens</source>
            <translation>%1 tokens</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="46" />
            <source>KV cache</source>
            <translation>KV cache</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="49" />
            <source>8-bit</source>
            <translation>8-bit</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="49" />
            <source>16-bit</source>
            <translation>16-bit</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="51" />
            <source>Memory</source>
            <translation>Memory</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="54" />
            <source>%1 (%2 tokens)</source>
            <translation>%1 (%2 tokens)</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="56" />
            <source>Draft model</source>
            <translation>Draft model</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="79" />
            <source>Chat template: %1</source>
            <translation>Chat template: %1</translation>
        </message>
        <message>
            <location filename="../ui/ModelInfoCard.qml" line="88" />
            <source>Architecture, quantization, trained context and memory appear once the model is loaded (Apply).</source>
            <translation>Architecture, quantization, trained context and memory appear once the model is loaded (Apply).</translation>
        </message>
    </context>
    <context>
        <name>ModelSettings</name>
        <message>
            <location filename="../ui/ModelSettings.qml" line="11" />
            <source>Model</source>
            <translation>Model</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="15" />
            <source>Model file</source>
            <translation>Model file</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="24" />
            <source>/path/to/model.gguf</source>
            <translation>/path/to/model.gguf</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="29" />
            <location filename="../ui/ModelSettings.qml" line="51" />
            <source>Browse…</source>
            <translation>Browse…</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="38" />
            <source>Draft model (optional)</source>
            <translation>Draft model (optional)</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="39" />
            <source>A small model with the same vocabulary (one of the same family) that guesses tokens for the model to check, when speculative decoding is set to use it.</source>
            <translation>A small model with the same vocabulary (one of the same family) that guesses tokens for the model to check, when speculative decoding is set to use it.</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="46" />
            <source>None</source>
            <translation>None</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="63" />
            <source>Device</source>
            <translation>Device</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="67" />
            <source>CPU</source>
            <translation>CPU</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="68" />
            <source>One CUDA GPU</source>
            <translation>One CUDA GPU</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="69" />
            <source>Split across GPUs</source>
            <translation>Split across GPUs</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="75" />
            <source>Context length</source>
            <translation>Context length</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="76" />
            <source>Tokens; 0 uses the trained context (at most 4096).</source>
            <translation>Tokens; 0 uses the trained context (at most 4096).</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="88" />
            <source>KV cache</source>
            <translation>KV cache</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="89" />
            <source>8-bit holds 1.8x the context in the same memory and speeds up long chats on the CPU, a little less exactly. CPU only: GPUs keep 16-bit.</source>
            <translation>8-bit holds 1.8x the context in the same memory and speeds up long chats on the CPU, a little less exactly. CPU only: GPUs keep 16-bit.</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="94" />
            <source>16-bit (exact to 1/2048)</source>
            <translation>16-bit (exact to 1/2048)</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="95" />
            <source>8-bit</source>
            <translation>8-bit</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="101" />
            <source>Speculative decoding</source>
            <translation>Speculative decoding</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="102" />
            <source>Guesses the next words and checks them in one step: the same replies, in fewer steps. From the conversation: earlier text (code, rewrites, lists). With the draft model: the model above. CPU only for now.</source>
            <translation>Guesses the next words and checks them in one step: the same replies, in fewer steps. From the conversation: earlier text (code, rewrites, lists). With the draft model: the model above. CPU only for now.</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="107" />
            <source>From the conversation</source>
            <translation>From the conversation</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="108" />
            <source>With the draft model</source>
            <translation>With the draft model</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="109" />
            <source>Off</source>
            <translation>Off</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="117" />
            <source>Choose a model file</source>
            <translation>Choose a model file</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="118" />
            <source>GGUF models (*.gguf)</source>
            <translation>GGUF models (*.gguf)</translation>
        </message>
        <message>
            <location filename="../ui/ModelSettings.qml" line="118" />
            <source>All files (*)</source>
            <translation>All files (*)</translation>
        </message>
    </context>
    <context>
        <name>ReasoningFold</name>
        <message>
            <location filename="../ui/ReasoningFold.qml" line="34" />
            <source>Thinking…</source>
            <translation>Thinking…</translation>
        </message>
        <message>
            <location filename="../ui/ReasoningFold.qml" line="34" />
            <source>Reasoning</source>
            <translation>Reasoning</translation>
        </message>
    </context>
    <context>
        <name>SamplingSettings</name>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="8" />
            <source>Sampling</source>
            <translation>Sampling</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="16" />
            <source>Temperature</source>
            <translation>Temperature</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="17" />
            <source>0 always picks the likeliest token.</source>
            <translation>0 always picks the likeliest token.</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="22" />
            <source>Max tokens</source>
            <translation>Max tokens</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="23" />
            <source>-1: until the context is full.</source>
            <translation>-1: until the context is full.</translation>
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
            <translation>Repeat penalty</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="48" />
            <source>Seed</source>
            <translation>Seed</translation>
        </message>
        <message>
            <location filename="../ui/SamplingSettings.qml" line="49" />
            <source>0: a new random seed for every reply.</source>
            <translation>0: a new random seed for every reply.</translation>
        </message>
    </context>
    <context>
        <name>SettingsDialog</name>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="26" />
            <source>Settings</source>
            <translation>Settings</translation>
        </message>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="58" />
            <source>Close</source>
            <translation>Close</translation>
        </message>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="122" />
            <source>Fix the fields marked in red to apply.</source>
            <translation>Fix the fields marked in red to apply.</translation>
        </message>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="129" />
            <source>Cancel</source>
            <translation>Cancel</translation>
        </message>
        <message>
            <location filename="../ui/SettingsDialog.qml" line="134" />
            <source>Apply</source>
            <translation>Apply</translation>
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
            <translation>New chat (Ctrl+N)</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="51" />
            <source>Search conversations (Ctrl+F)</source>
            <translation>Search conversations (Ctrl+F)</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="78" />
            <source>Conversations</source>
            <translation>Conversations</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="100" />
            <source>No conversation mentions “%1”.</source>
            <translation>No conversation mentions “%1”.</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="101" />
            <source>Your conversations appear here.</source>
            <translation>Your conversations appear here.</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="110" />
            <source>Settings (Ctrl+,)</source>
            <translation>Settings (Ctrl+,)</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="115" />
            <source>Import conversations…</source>
            <translation>Import conversations…</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="120" />
            <source>1 chat</source>
            <translation>1 chat</translation>
        </message>
        <message>
            <location filename="../ui/Sidebar.qml" line="120" />
            <source>%1 chats</source>
            <translation>%1 chats</translation>
        </message>
    </context>
    <context>
        <name>SidebarItem</name>
        <message>
            <location filename="../ui/SidebarItem.qml" line="71" />
            <source>Conversation title</source>
            <translation>Conversation title</translation>
        </message>
        <message>
            <location filename="../ui/SidebarItem.qml" line="87" />
            <source>Rename</source>
            <translation>Rename</translation>
        </message>
        <message>
            <location filename="../ui/SidebarItem.qml" line="94" />
            <source>Delete</source>
            <translation>Delete</translation>
        </message>
    </context>
    <context>
        <name>StatusBar</name>
        <message>
            <location filename="../ui/StatusBar.qml" line="19" />
            <source>Generating… Esc stops</source>
            <translation>Generating… Esc stops</translation>
        </message>
        <message>
            <location filename="../ui/StatusBar.qml" line="25" />
            <source>%1 tok/s</source>
            <translation>%1 tok/s</translation>
        </message>
        <message>
            <location filename="../ui/StatusBar.qml" line="46" />
            <source>context %1 / %2</source>
            <translation>context %1 / %2</translation>
        </message>
    </context>
    <context>
        <name>UndoBar</name>
        <message>
            <location filename="../ui/UndoBar.qml" line="21" />
            <source>Deleted “%1”</source>
            <translation>Deleted “%1”</translation>
        </message>
        <message>
            <location filename="../ui/UndoBar.qml" line="27" />
            <source>Undo</source>
            <translation>Undo</translation>
        </message>
    </context>
    <context>
        <name>kestrel::desktop::ChatController</name>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="30" />
            <location filename="../app/desktop/chat_controller.cpp" line="99" />
            <source>New chat</source>
            <translation>New chat</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="112" />
            <source>No model file was found at %1. Choose a .gguf model to start chatting.</source>
            <translation>No model file was found at %1. Choose a .gguf model to start chatting.</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="157" />
            <location filename="../app/desktop/chat_controller.cpp" line="158" />
            <source>The model could not be loaded: %1</source>
            <translation>The model could not be loaded: %1</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="199" />
            <source>The model is still loading; wait a moment.</source>
            <translation>The model is still loading; wait a moment.</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="200" />
            <source>No model is loaded. Open Settings (Ctrl+,) to choose one.</source>
            <translation>No model is loaded. Open Settings (Ctrl+,) to choose one.</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="498" />
            <source>Unknown export format "%1".</source>
            <translation>Unknown export format "%1".</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="502" />
            <source>Open a conversation to export, or export all of them.</source>
            <translation>Open a conversation to export, or export all of them.</translation>
        </message>
        <message>
            <location filename="../app/desktop/chat_controller.cpp" line="533" />
            <source>Kestrel conversations</source>
            <translation>Kestrel conversations</translation>
        </message>
    </context>
    <context>
        <name>kestrel::desktop::EngineWorker</name>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="108" />
            <source>The draft model could not be loaded: %1</source>
            <translation>The draft model could not be loaded: %1</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="110" />
            <source>The draft model is not used: %1</source>
            <translation>The draft model is not used: %1</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="114" />
            <source>The draft model could not be opened: %1</source>
            <translation>The draft model could not be opened: %1</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="169" />
            <source>The draft model is not used on a GPU yet: there its guesses cost more time than they save.</source>
            <translation>The draft model is not used on a GPU yet: there its guesses cost more time than they save.</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="192" />
            <source>No model is loaded. Open Settings (Ctrl+,) and choose a .gguf model file.</source>
            <translation>No model is loaded. Open Settings (Ctrl+,) and choose a .gguf model file.</translation>
        </message>
        <message>
            <location filename="../app/desktop/engine_worker.cpp" line="209" />
            <source>The chat template failed: %1</source>
            <translation>The chat template failed: %1</translation>
        </message>
    </context>
    <context>
        <name>kestrel::desktop::SettingsModel</name>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="126" />
            <source>Choose a model file (.gguf).</source>
            <translation>Choose a model file (.gguf).</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="128" />
            <source>%1 does not exist or is not a file.</source>
            <translation>%1 does not exist or is not a file.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="130" />
            <source>%1 cannot be read; check its permissions.</source>
            <translation>%1 cannot be read; check its permissions.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="132" />
            <source>Kestrel reads GGUF models; this file does not end in .gguf.</source>
            <translation>Kestrel reads GGUF models; this file does not end in .gguf.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="134" />
            <source>The draft model %1 does not exist.</source>
            <translation>The draft model %1 does not exist.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="136" />
            <source>Choose CPU, one CUDA GPU or several GPUs.</source>
            <translation>Choose CPU, one CUDA GPU or several GPUs.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="138" />
            <source>Choose 16-bit or 8-bit.</source>
            <translation>Choose 16-bit or 8-bit.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="141" />
            <source>Choose from the conversation, with the draft model, or off.</source>
            <translation>Choose from the conversation, with the draft model, or off.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="143" />
            <source>Choose a draft model above first.</source>
            <translation>Choose a draft model above first.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="146" />
            <source>Use 0 for the model's default, or a positive number of tokens.</source>
            <translation>Use 0 for the model's default, or a positive number of tokens.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="148" />
            <source>At least 256 tokens are needed for a conversation.</source>
            <translation>At least 256 tokens are needed for a conversation.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="151" />
            <source>The model was trained on %1 tokens; a longer context produces garbage. Use %1 or less.</source>
            <translation>The model was trained on %1 tokens; a longer context produces garbage. Use %1 or less.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="153" />
            <source>Between 0 (always the likeliest token) and 5.</source>
            <translation>Between 0 (always the likeliest token) and 5.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="154" />
            <source>0 turns top-k off; otherwise up to 100000.</source>
            <translation>0 turns top-k off; otherwise up to 100000.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="155" />
            <source>Above 0 and at most 1 (1 turns top-p off).</source>
            <translation>Above 0 and at most 1 (1 turns top-p off).</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="156" />
            <source>At least 0 (off) and below 1.</source>
            <translation>At least 0 (off) and below 1.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="158" />
            <source>Between 0.5 and 3; 1 turns the penalty off.</source>
            <translation>Between 0.5 and 3; 1 turns the penalty off.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="161" />
            <source>A whole number from 0 (a new random seed each reply) up to 2^64-1.</source>
            <translation>A whole number from 0 (a new random seed each reply) up to 2^64-1.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="163" />
            <source>A positive number of tokens, or -1 for no limit but the context.</source>
            <translation>A positive number of tokens, or -1 for no limit but the context.</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="165" />
            <source>A reply cannot be longer than the context (%1 tokens).</source>
            <translation>A reply cannot be longer than the context (%1 tokens).</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="169" />
            <source>This does not look like a Jinja chat template ({{ ... }} / {% ... %}).</source>
            <translation>This does not look like a Jinja chat template ({{ ... }} / {% ... %}).</translation>
        </message>
        <message>
            <location filename="../app/desktop/settings_model.cpp" line="171" />
            <source>Unknown language.</source>
            <translation>Unknown language.</translation>
        </message>
    </context>
</TS>
